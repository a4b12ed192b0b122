/**
 * The pure half of the projector: a log record to the rows it writes, as statement parameter
 * lists of primitives (string, number, null), without touching a database. The conflict rule
 * lives in the SQL of the statements (./projector.ts executes them), so a plan never depends on
 * what a file holds: the same record always plans the same rows, on any thread.
 *
 * Imports no database code: the rebuild's planner thread (./plan.worker.ts) loads it.
 */
import { DomainEvent, Json, Records } from "@ocs/protocol"
import { asText, toMillis } from "../UpdatedAt.ts"

/** A log record as the projector needs it (the event log's `LogRecord` fits). */
export interface ProjectableRecord extends DomainEvent.RawRecord {
  readonly offset: number
}

const BOOKKEEPING = ["last_event_id", "last_offset", "last_index", "last_source", "last_received_at"] as const

const newer = (table: string, versioned: boolean) => {
  const position = `(excluded.last_offset, excluded.last_index) > (${table}.last_offset, ${table}.last_index)`
  if (!versioned) return position
  return `CASE WHEN excluded.updated_at_ms IS NOT NULL AND ${table}.updated_at_ms IS NOT NULL
    AND excluded.updated_at_ms <> ${table}.updated_at_ms
    THEN excluded.updated_at_ms > ${table}.updated_at_ms ELSE ${position} END`
}

const upsertSql = (table: string, key: ReadonlyArray<string>, content: ReadonlyArray<string>, versioned: boolean) => {
  const columns = [...key, ...content, ...BOOKKEEPING]
  const set = [...content, ...BOOKKEEPING].map((c) => `${c} = excluded.${c}`).join(", ")
  return `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})
    ON CONFLICT (${key.join(", ")}) DO UPDATE SET ${set} WHERE ${newer(table, versioned)}`
}

/** Column lists, in the order the statements below bind them. */
export const columns = {
  products: {
    key: ["app_id", "business_id", "id"],
    content: ["app_product_id", "code", "barcode", "name", "price", "price_text", "record", "updated_at", "updated_at_ms", "deleted"]
  },
  inventory: {
    key: ["app_id", "business_id", "product_id", "depot_id"],
    content: ["quantity", "quantity_text", "available", "available_text", "record", "updated_at", "updated_at_ms"]
  },
  orders: {
    key: ["app_id", "business_id", "id"],
    content: ["app_order_id", "customer_name", "customer_mobile", "status", "lines", "line_count", "record", "updated_at", "updated_at_ms", "deleted"]
  },
  payments: {
    key: ["app_id", "business_id", "id"],
    content: ["order_id", "invoice_id", "amount", "amount_text", "method", "record", "updated_at", "updated_at_ms"]
  },
  documents: {
    key: ["app_id", "business_id", "kind", "id"],
    content: ["body", "updated_at", "updated_at_ms"]
  },
  webhooks_enabled: {
    key: ["app_id", "business_id"],
    content: ["registered_events"]
  }
} as const

export const statementsSql = {
  products: upsertSql("products", columns.products.key, columns.products.content, true),
  inventory: upsertSql("inventory", columns.inventory.key, columns.inventory.content, true),
  orders: upsertSql("orders", columns.orders.key, columns.orders.content, true),
  payments: upsertSql("payments", columns.payments.key, columns.payments.content, true),
  documents: upsertSql("documents", columns.documents.key, columns.documents.content, true),
  webhooks_enabled: upsertSql("webhooks_enabled", columns.webhooks_enabled.key, columns.webhooks_enabled.content, false),
  applied: "INSERT OR IGNORE INTO applied_records (offset) VALUES (?)",
  unknown_events: `INSERT OR IGNORE INTO unknown_events
    (app_id, business_id, event_id, record_id, offset, source, type, reason, data, received_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
} as const

/** Which statement a planned row goes to (index into `opStatements`). */
export const Op = {
  products: 0,
  inventory: 1,
  orders: 2,
  payments: 3,
  documents: 4,
  webhooks: 5,
  unknown: 6
} as const
export type Op = typeof Op[keyof typeof Op]

/** The statements in `Op` order. */
export const opStatements: ReadonlyArray<string> = [
  statementsSql.products,
  statementsSql.inventory,
  statementsSql.orders,
  statementsSql.payments,
  statementsSql.documents,
  statementsSql.webhooks_enabled,
  statementsSql.unknown_events
]

export type Param = string | number | null

/**
 * The rows of a run of records, appended record by record: row `k` runs statement `ops[k]`
 * with `params[k]`; record `r` owns rows `ends[r - 1] .. ends[r]` (from 0 for the first) and
 * decoded to `events[r]` domain events. Plain arrays of primitives: cheap to post between threads.
 */
export interface Plan {
  readonly ops: Array<Op>
  readonly params: Array<ReadonlyArray<Param>>
  readonly ends: Array<number>
  readonly events: Array<number>
}

export const emptyPlan = (): Plan => ({ ops: [], params: [], ends: [], events: [] })

type Amount = number | bigint | null | undefined

const amount = (value: Amount): number | null =>
  value === null || value === undefined ? null : typeof value === "bigint" ? Number(value) : value

const amountText = (value: Amount): string | null =>
  value === null || value === undefined ? null : Json.stringify(value)

const str = (value: string | null | undefined): string | null => value ?? null

const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined

// Decoded records hold bigints for big ids: serialise them the way made for parsed values.
const stringify = Json.stringifyParsed

const text = (value: unknown): string | null => asText(value, stringify)

const row = (plan: Plan, op: Op, params: ReadonlyArray<Param>): void => {
  plan.ops.push(op)
  plan.params.push(params)
}

const unknown = (
  plan: Plan,
  record: ProjectableRecord,
  event: { readonly id: string; readonly appId: string; readonly businessId: string | null; readonly source: string; readonly receivedAt: number },
  type: string,
  reason: string,
  data: unknown
): void =>
  row(plan, Op.unknown, [
    event.appId, event.businessId ?? "", event.id, record.id, record.offset, event.source, type, reason,
    data === undefined ? null : stringify(data), event.receivedAt
  ])

const stock = (
  plan: Plan,
  record: ProjectableRecord,
  event: DomainEvent.InventoryChanged | DomainEvent.InventoryObserved,
  item: Records.StockLevel,
  index: number
): void => {
  const productId = item.productId ?? item.id
  if (productId === null || productId === undefined) {
    return unknown(plan, record, event, record.type, `${event._tag}: stock level without productId`, item)
  }
  const updatedAt = item["updatedAt"]
  row(plan, Op.inventory, [
    event.appId, event.businessId, productId, item.depotId ?? "",
    amount(item.quantity), amountText(item.quantity), amount(item.available), amountText(item.available),
    stringify(item), text(updatedAt), toMillis(updatedAt),
    event.id, record.offset, index, event.source, event.receivedAt
  ])
}

const event1 = (plan: Plan, record: ProjectableRecord, event: DomainEvent.DomainEvent, index: number): void => {
  const offset = record.offset
  switch (event._tag) {
    case "ProductAdded":
    case "ProductUpdated":
    case "ProductObserved": {
      const p = event.product
      const id = Records.recordId(p)
      if (id === undefined) return unknown(plan, record, event, record.type, `${event._tag}: product without id`, p)
      return row(plan, Op.products, [
        event.appId, event.businessId, id,
        str(p.appProductId), str(p.code), str(p.barcode), str(p.name), amount(p.price), amountText(p.price),
        stringify(p), text(p.updatedAt), toMillis(p.updatedAt), 0,
        event.id, offset, index, event.source, event.receivedAt
      ])
    }
    case "ProductDeleted": {
      if (event.productId === undefined) return unknown(plan, record, event, record.type, "ProductDeleted: without id", event.data)
      const updatedAt = field(event.data, "updatedAt")
      return row(plan, Op.products, [
        event.appId, event.businessId, event.productId,
        null, null, null, null, null, null,
        stringify(event.data), text(updatedAt), toMillis(updatedAt) ?? event.receivedAt, 1,
        event.id, offset, index, event.source, event.receivedAt
      ])
    }
    case "InventoryChanged": {
      const items = event.items
      for (let i = 0; i < items.length; i++) stock(plan, record, event, items[i]!, index * 65536 + i)
      return
    }
    case "InventoryObserved":
      return stock(plan, record, event, event.item, index)
    case "OrderAdded":
    case "OrderUpdated":
    case "OrderObserved": {
      const o = event.order
      const id = Records.recordId(o)
      if (id === undefined) return unknown(plan, record, event, record.type, `${event._tag}: order without id`, o)
      const lines = o.products
      return row(plan, Op.orders, [
        event.appId, event.businessId, id,
        str(event.appOrderId), str(o.customerName), str(o.customerMobile), text(o.status),
        lines === null || lines === undefined ? null : stringify(lines), lines?.length ?? 0,
        stringify(o), text(o.updatedAt), toMillis(o.updatedAt), 0,
        event.id, offset, index, event.source, event.receivedAt
      ])
    }
    case "OrderDeleted": {
      if (event.orderId === undefined) return unknown(plan, record, event, record.type, "OrderDeleted: without id", event.data)
      const updatedAt = field(event.data, "updatedAt")
      return row(plan, Op.orders, [
        event.appId, event.businessId, event.orderId,
        null, null, null, null, null, 0,
        stringify(event.data), text(updatedAt), toMillis(updatedAt) ?? event.receivedAt, 1,
        event.id, offset, index, event.source, event.receivedAt
      ])
    }
    case "PaymentReceived":
    case "PaymentObserved": {
      const p = event.payment
      // A payment is a fact even without an id: key it by its (stable) domain event id.
      const id = Records.recordId(p) ?? `event:${event.id}`
      return row(plan, Op.payments, [
        event.appId, event.businessId, id,
        str(p.orderId), str(p.invoiceId), amount(p.amount), amountText(p.amount), str(p.method),
        stringify(p), text(p.updatedAt), toMillis(p.updatedAt),
        event.id, offset, index, event.source, event.receivedAt
      ])
    }
    case "DocumentObserved":
      return row(plan, Op.documents, [
        event.appId, event.businessId, event.kind, event.documentId ?? `event:${event.id}`,
        stringify(event.document), text(event.updatedAt), toMillis(event.updatedAt),
        event.id, offset, index, event.source, event.receivedAt
      ])
    case "WebhooksEnabled":
      return row(plan, Op.webhooks, [
        event.appId, "", stringify(event.registeredEvents),
        event.id, offset, index, event.source, event.receivedAt
      ])
    case "UnknownEvent":
      return unknown(plan, record, event, event.type, event.reason, event.data)
  }
}

/** Decodes one record (`DomainEvent.decode`) and appends its rows to `plan`. */
export const planRecord = (plan: Plan, record: ProjectableRecord): void => {
  const decoded = DomainEvent.decode(record)
  for (let i = 0; i < decoded.length; i++) event1(plan, record, decoded[i]!, i)
  plan.ends.push(plan.ops.length)
  plan.events.push(decoded.length)
}

/** The plan of a run of records, in order. */
export const planRecords = (records: ReadonlyArray<ProjectableRecord>): Plan => {
  const plan = emptyPlan()
  for (let r = 0; r < records.length; r++) planRecord(plan, records[r]!)
  return plan
}

// The planner thread's messages (./planner.ts, ./plan.worker.ts).

/** Records as parallel arrays of primitives: far cheaper to post than thousands of objects. */
export interface Columns {
  readonly offset: Array<number>
  readonly id: Array<string>
  readonly appId: Array<string>
  readonly businessId: Array<string | null>
  readonly source: Array<ProjectableRecord["source"]>
  readonly type: Array<string>
  readonly receivedAt: Array<number>
  readonly body: Array<string>
  readonly meta: Array<unknown>
}

/** A chunk's slot in `PlanRequest.claims`: who plans it (`posted`: the worker has sent its plan). */
export const Claim = { free: 0, worker: 1, caller: 2, posted: 3 } as const

/**
 * One batch, cut in chunks of `chunkSize` records. Each chunk is planned by whichever thread
 * first claims it (`Atomics.compareExchange` on `claims`, over a SharedArrayBuffer), so the
 * worker always has work queued and the other thread can still take chunks from the end.
 */
export interface PlanRequest {
  readonly batch: number
  readonly chunkSize: number
  readonly claims: Int32Array
  readonly records: Columns
}

export type PlanReply =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Planned"; readonly batch: number; readonly chunk: number; readonly plan: Plan }
  | { readonly _tag: "Failed"; readonly batch: number; readonly chunk: number; readonly error: string }

export const toColumns = (records: ReadonlyArray<ProjectableRecord>): Columns => {
  const c: Columns = { offset: [], id: [], appId: [], businessId: [], source: [], type: [], receivedAt: [], body: [], meta: [] }
  for (const r of records) {
    c.offset.push(r.offset)
    c.id.push(r.id)
    c.appId.push(r.appId)
    c.businessId.push(r.businessId)
    c.source.push(r.source)
    c.type.push(r.type)
    c.receivedAt.push(r.receivedAt)
    c.body.push(r.body)
    c.meta.push(r.meta)
  }
  return c
}

export const fromColumns = (c: Columns): Array<ProjectableRecord> => {
  const records: Array<ProjectableRecord> = []
  for (let i = 0; i < c.offset.length; i++) {
    records.push({
      offset: c.offset[i]!, id: c.id[i]!, appId: c.appId[i]!, businessId: c.businessId[i]!, source: c.source[i]!,
      type: c.type[i]!, receivedAt: c.receivedAt[i]!, body: c.body[i]!, meta: c.meta[i]
    })
  }
  return records
}
