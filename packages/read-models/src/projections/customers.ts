/** Customers: customer/list pages and the deletions a complete full pass finds (docs/api-catalogue.md §6). */
import { Records } from "@ocs/protocol"
import { and, asc, eq } from "drizzle-orm"
import { index, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core"
import type { Plan, ProjectableRecord } from "../internal/planTypes.ts"
import { byId, contains, entityPage, limitOf, page, when } from "../internal/queryKit.ts"
import type * as V from "../Views.ts"
import {
  amount, amountText, define, entityColumns, entityTable, type EventOf, held, id, row, stringify, textOf, toMillis, upsert
} from "./Projection.ts"
import { tombstoneView } from "./tree.ts"
import { unknown } from "./unknownEvents.ts"

export const table = sqliteTable("customers", entityColumns({
  /** 1 retail, 2 wholesale, 3 agent. */
  type: text("type"),
  code: text("code"),
  name: text("name"),
  mobile: text("mobile"),
  email: text("email"),
  points: real("points"),
  totalAmount: real("total_amount"),
  totalAmountText: text("total_amount_text"),
  /** `level.name` (else its id). */
  level: text("level"),
  /** `group.name` (else its id). */
  group: text("group")
}), (t) => [
  primaryKey({ columns: [t.appId, t.businessId, t.id] }),
  index("customers_tenant_mobile").on(t.appId, t.businessId, t.mobile)
])

const spec = entityTable(
  "customers",
  ["type", "code", "name", "mobile", "email", "points", "total_amount", "total_amount_text", "level", "group", "record", "updated_at", "updated_at_ms", "deleted"],
  true
)
const write = upsert(spec)

/** A reference's name, else its id (`level`, `group` of a customer). */
const refName = (record: unknown, path: string): string | null => textOf(Records.valueAt(record, `${path}.name`)) ?? id(record, `${path}.id`)

const customer = (plan: Plan, record: ProjectableRecord, event: EventOf<"CustomerObserved">, index: number): void => {
  const c = event.customer
  const customerId = Records.recordId(c)
  if (customerId === undefined) return unknown(plan, record, event, record.type, "CustomerObserved: customer without id", c)
  row(plan, write, [
    event.appId, event.businessId, customerId,
    textOf(c.type), textOf(c.code), textOf(c.name), textOf(c.mobile), textOf(c.email),
    amount(c.points), amount(c.totalAmount), amountText(c.totalAmount), refName(c, "level"), refName(c, "group"),
    stringify(c), textOf(c.updatedAt), toMillis(c.updatedAt), 0,
    ...held(event, record, index)
  ])
}

/**
 * A customer a complete full pass no longer found (docs/architecture.md §4.14): content null,
 * `record` says why; its updated time is when the deletion was found, so an older page cannot
 * bring it back.
 */
const customerDeleted = (plan: Plan, record: ProjectableRecord, event: EventOf<"CustomerDeleted">, index: number): void =>
  row(plan, write, [
    event.appId, event.businessId, event.customerId,
    null, null, null, null, null, null, null, null, null, null,
    stringify(event.data), null, event.receivedAt, 1, ...held(event, record, index)
  ])

export const customers = define({
  tables: [spec],
  statements: [write],
  apply: { CustomerObserved: customer, CustomerDeleted: customerDeleted },
  pass: { kind: "customer", idColumn: "id", windowed: false, observed: { CustomerObserved: (event) => Records.recordId(event.customer) } },
  counts: { live: "customers", tombstones: true },
  queries: (orm) => ({
    customers: (tenant: V.Tenant, options?: V.CustomerQuery): V.Page<V.Customer> => {
      const limit = limitOf(options)
      const c = table
      const rows = orm.select().from(c).where(and(
        ...entityPage(c, tenant, options),
        when(options?.mobile, (v) => eq(c.mobile, v)),
        contains(options?.search, [c.name, c.code, c.mobile, c.email])
      )).orderBy(asc(c.id)).limit(limit).all()
      return page(rows.map(tombstoneView), limit)
    },
    customer: (tenant: V.Tenant, customerId: string): V.Customer | undefined => {
      const found = orm.select().from(table).where(byId(table, tenant, customerId)).get()
      return found === undefined ? undefined : tombstoneView(found)
    }
  })
})
