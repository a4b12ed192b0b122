/**
 * The hot path: domain events to rows, with raw prepared statements on the better-sqlite3
 * handle (drizzle owns the schema and the read queries). Everything here is synchronous and
 * runs inside the caller's transaction, which also saves the checkpoint.
 *
 * Conflict rule (one SQL upsert per row, `newer` below): an observation replaces the row when
 * - both carry a parseable updatedAt and they differ: the newer updatedAt wins;
 * - otherwise (equal, or absent/unparseable on either side): the later log position
 *   (offset, then index inside the record) wins.
 * Records already applied (table applied_records, keyed by offset) are skipped, so replays and
 * redeliveries apply once; a record delivered out of log order for the first time still goes
 * through the rule, which makes the result independent of delivery order whenever the rule is a
 * total order for the entity (see README). Deletes write tombstones under the same rule; a tombstone's
 * updatedAt is the delete's own updatedAt when it carries one, else the time the delete was
 * received, so a sync observation older than the delete does not resurrect the entity.
 */
import { DomainEvent, Json, Records } from "@ocs/protocol"
import type Database from "better-sqlite3"
import { asText, toMillis } from "../UpdatedAt.ts"

/** A log record as the projector needs it (the event log's `LogRecord` fits). */
export interface ProjectableRecord extends DomainEvent.RawRecord {
  readonly offset: number
}

export interface ApplyStats {
  /** Records applied (records seen before are skipped and not counted). */
  readonly records: number
  readonly events: number
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

type Amount = number | bigint | null | undefined

const amount = (value: Amount): number | null =>
  value === null || value === undefined ? null : typeof value === "bigint" ? Number(value) : value

const amountText = (value: Amount): string | null =>
  value === null || value === undefined ? null : Json.stringify(value)

const str = (value: string | null | undefined): string | null => value ?? null

const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined

/** Prepares the statements once per connection; `apply` is then plain loops. */
export const make = (client: Database.Database) => {
  const s = {
    products: client.prepare(statementsSql.products),
    inventory: client.prepare(statementsSql.inventory),
    orders: client.prepare(statementsSql.orders),
    payments: client.prepare(statementsSql.payments),
    documents: client.prepare(statementsSql.documents),
    webhooks: client.prepare(statementsSql.webhooks_enabled),
    unknown: client.prepare(statementsSql.unknown_events),
    applied: client.prepare(statementsSql.applied)
  }

  const unknown = (record: ProjectableRecord, event: { readonly id: string; readonly appId: string; readonly businessId: string | null; readonly source: string; readonly receivedAt: number }, type: string, reason: string, data: unknown) => {
    s.unknown.run(
      event.appId, event.businessId ?? "", event.id, record.id, record.offset, event.source, type, reason,
      data === undefined ? null : Json.stringify(data), event.receivedAt
    )
  }

  const apply1 = (record: ProjectableRecord, event: DomainEvent.DomainEvent, index: number): void => {
    const offset = record.offset
    switch (event._tag) {
      case "ProductAdded":
      case "ProductUpdated":
      case "ProductObserved": {
        const p = event.product
        const id = Records.recordId(p)
        if (id === undefined) return unknown(record, event, record.type, `${event._tag}: product without id`, p)
        s.products.run(
          event.appId, event.businessId, id,
          str(p.appProductId), str(p.code), str(p.barcode), str(p.name), amount(p.price), amountText(p.price),
          Json.stringify(p), asText(p.updatedAt, Json.stringify), toMillis(p.updatedAt), 0,
          event.id, offset, index, event.source, event.receivedAt
        )
        return
      }
      case "ProductDeleted": {
        if (event.productId === undefined) return unknown(record, event, record.type, "ProductDeleted: without id", event.data)
        const updatedAt = field(event.data, "updatedAt")
        s.products.run(
          event.appId, event.businessId, event.productId,
          null, null, null, null, null, null,
          Json.stringify(event.data), asText(updatedAt, Json.stringify), toMillis(updatedAt) ?? event.receivedAt, 1,
          event.id, offset, index, event.source, event.receivedAt
        )
        return
      }
      case "InventoryChanged": {
        const items = event.items
        for (let i = 0; i < items.length; i++) stock(record, event, items[i]!, index * 65536 + i)
        return
      }
      case "InventoryObserved":
        return stock(record, event, event.item, index)
      case "OrderAdded":
      case "OrderUpdated":
      case "OrderObserved": {
        const o = event.order
        const id = Records.recordId(o)
        if (id === undefined) return unknown(record, event, record.type, `${event._tag}: order without id`, o)
        const lines = o.products
        s.orders.run(
          event.appId, event.businessId, id,
          str(event.appOrderId), str(o.customerName), str(o.customerMobile), asText(o.status, Json.stringify),
          lines === null || lines === undefined ? null : Json.stringify(lines), lines?.length ?? 0,
          Json.stringify(o), asText(o.updatedAt, Json.stringify), toMillis(o.updatedAt), 0,
          event.id, offset, index, event.source, event.receivedAt
        )
        return
      }
      case "OrderDeleted": {
        if (event.orderId === undefined) return unknown(record, event, record.type, "OrderDeleted: without id", event.data)
        const updatedAt = field(event.data, "updatedAt")
        s.orders.run(
          event.appId, event.businessId, event.orderId,
          null, null, null, null, null, 0,
          Json.stringify(event.data), asText(updatedAt, Json.stringify), toMillis(updatedAt) ?? event.receivedAt, 1,
          event.id, offset, index, event.source, event.receivedAt
        )
        return
      }
      case "PaymentReceived":
      case "PaymentObserved": {
        const p = event.payment
        // A payment is a fact even without an id: key it by its (stable) domain event id.
        const id = Records.recordId(p) ?? `event:${event.id}`
        s.payments.run(
          event.appId, event.businessId, id,
          str(p.orderId), str(p.invoiceId), amount(p.amount), amountText(p.amount), str(p.method),
          Json.stringify(p), asText(p.updatedAt, Json.stringify), toMillis(p.updatedAt),
          event.id, offset, index, event.source, event.receivedAt
        )
        return
      }
      case "DocumentObserved": {
        s.documents.run(
          event.appId, event.businessId, event.kind, event.documentId ?? `event:${event.id}`,
          Json.stringify(event.document), asText(event.updatedAt, Json.stringify), toMillis(event.updatedAt),
          event.id, offset, index, event.source, event.receivedAt
        )
        return
      }
      case "WebhooksEnabled": {
        s.webhooks.run(
          event.appId, "", Json.stringify(event.registeredEvents),
          event.id, offset, index, event.source, event.receivedAt
        )
        return
      }
      case "UnknownEvent":
        return unknown(record, event, event.type, event.reason, event.data)
    }
  }

  const stock = (
    record: ProjectableRecord,
    event: DomainEvent.InventoryChanged | DomainEvent.InventoryObserved,
    item: Records.StockLevel,
    index: number
  ): void => {
    const productId = item.productId ?? item.id
    if (productId === null || productId === undefined) {
      return unknown(record, event, record.type, `${event._tag}: stock level without productId`, item)
    }
    const updatedAt = item["updatedAt"]
    s.inventory.run(
      event.appId, event.businessId, productId, item.depotId ?? "",
      amount(item.quantity), amountText(item.quantity), amount(item.available), amountText(item.available),
      Json.stringify(item), asText(updatedAt, Json.stringify), toMillis(updatedAt),
      event.id, record.offset, index, event.source, event.receivedAt
    )
  }

  /** Decodes and applies records in the given order. Synchronous: call inside a transaction. */
  const apply = (records: ReadonlyArray<ProjectableRecord>): ApplyStats => {
    let events = 0
    let applied = 0
    for (let r = 0; r < records.length; r++) {
      const record = records[r]!
      // Applied before (replay, redelivery): skip the whole record.
      if (s.applied.run(record.offset).changes === 0) continue
      applied++
      const decoded = DomainEvent.decode(record)
      for (let i = 0; i < decoded.length; i++) apply1(record, decoded[i]!, i)
      events += decoded.length
    }
    return { records: applied, events }
  }

  return { apply }
}

export type Projector = ReturnType<typeof make>
