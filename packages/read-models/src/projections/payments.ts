/** Payments: paymentReceived webhooks (v2) and payment pages, keyed by the payment id. */
import { Records } from "@ocs/protocol"
import { and, asc, eq, gt } from "drizzle-orm"
import { index, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core"
import type { Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { limitOf, ofTenant, page, when, withRecord } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import { amount, amountText, bookkeepingColumns, define, entityTable, type EventOf, held, id, row, stringify, tenantColumns, textOf, toMillis, upsert, versionColumns } from "./Projection.ts"

export const table = sqliteTable("payments", {
  ...tenantColumns,
  /** The payment id; `event:<domain event id>` when the record carries none. */
  id: text("id").notNull(),
  orderId: text("order_id"),
  invoiceId: text("invoice_id"),
  amount: real("amount"),
  amountText: text("amount_text"),
  method: text("method"),
  record: text("record").notNull(),
  ...versionColumns,
  ...bookkeepingColumns
}, (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.id] }),
  index("payments_tenant_order").on(t.appId, t.businessId, t.orderId)
])

const spec = entityTable("payments", ["order_id", "invoice_id", "amount", "amount_text", "method", "record", "updated_at", "updated_at_ms"], true)
const write = upsert(spec)

const payment = (plan: Plan, record: ProjectableRecord, event: EventOf<"PaymentReceived" | "PaymentObserved">, index: number): void => {
  const p = event.payment
  // A payment is a fact even without an id: key it by its (stable) domain event id.
  const paymentId = Records.recordId(p) ?? `event:${event.id}`
  row(plan, write, [
    event.appId, event.businessId, paymentId,
    id(p, "orderId"), id(p, "invoiceId"), amount(p.amount), amountText(p.amount), textOf(p.method),
    stringify(p), textOf(p.updatedAt), toMillis(p.updatedAt),
    ...held(event, record, index)
  ])
}

export const payments = define({
  tables: [spec],
  statements: [write],
  apply: { PaymentReceived: payment, PaymentObserved: payment },
  counts: { live: "payments", tombstones: false },
  queries: (orm) => ({
    payments: (tenant: V.Tenant, options?: V.PaymentQuery): V.Page<V.Payment> => {
      const limit = limitOf(options)
      const p = table
      const rows = orm.select().from(p).where(and(
        ofTenant(p, tenant),
        when(options?.after, (v) => gt(p.id, v)),
        when(options?.orderId, (v) => eq(p.orderId, v)),
        when(options?.invoiceId, (v) => eq(p.invoiceId, v))
      )).orderBy(asc(p.id)).limit(limit).all()
      return page(rows.map(withRecord), limit)
    }
  })
})
