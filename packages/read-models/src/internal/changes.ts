/**
 * Change detection: what a pull saw, compared with the copy (docs/architecture.md §4.14).
 *
 * Runs in the projection's transaction, only on the live path (`apply`), around the rows of
 * one log record: `before` reads the rows its events will touch, the rows are written, then
 * `after` sees which rows took the event (the conflict rule may have kept a newer one) and
 * writes the changes found to `change_outbox`, in the same transaction. The read models then
 * relay the outbox to the log as a `changes` record (source "sync", dedupe key naming the
 * record that revealed them), and plugins see the same typed events webhooks give: created,
 * updated with the changed fields, deleted, stock changed, order status changed.
 *
 * - A pulled product or order is compared with its row: absent (or a tombstone) and taken,
 *   it was created; taken and different in a compared field, it was updated. The same state a
 *   webhook already brought compares equal: no second event.
 * - A deletion feed's record (order/deleted, bill/deleted) is compared too: a change, with who
 *   and when, only when the copy held the record live; after a pass found it gone, nothing.
 * - A webhook's product, order, stock or deletion is compared the same way (entries marked
 *   `origin: "webhook"`): a webhook that arrives after a pull found its change compares equal
 *   (or is refused by the conflict rule, or deletes a tombstone) and gives no second event.
 *   Plugins of the server take these instead of the webhook's own events
 *   (`DomainEvent.decodeChangeStream`).
 * - A pulled stock item is compared with the product's stock rows, depot by depot.
 * - An order whose status column moves (a pull or a webhook) also gives OrderStatusChanged.
 * - A pull's page that belongs to a full pass records the ids it saw in `pass_seen` (also a
 *   page another server appended again, which is not applied twice: `copy`); the pass's
 *   completion record then gives a deletion for every live row of that kind it did not see and
 *   that nothing touched since the pass started: products, orders, bills, customers, depots,
 *   categories, brands, and a product's stock rows (`DomainEvent.deletionOf`).
 *
 * A rebuild replays the `changes` records from the log and never runs this, so replaying the
 * log gives the same tables and appends nothing.
 */
import type Database from "better-sqlite3"
import { TraceContext } from "@ocs/event-log"
import { DomainEvent, EngineRecord, Json, Records } from "@ocs/protocol"
import * as Projections from "../projections/index.ts"
import * as Inventory from "../projections/inventory.ts"
import * as Orders from "../projections/orders.ts"
import * as Products from "../projections/products.ts"
import type { ProjectableRecord } from "./planTypes.ts"

const stringify = Json.stringifyParsed

/** Fields never compared, per kind (each projection's `compare.ignoredFields`). */
const ignored: Readonly<Record<string, ReadonlySet<string>>> = {
  product: new Set(Products.compare.ignoredFields),
  order: new Set(Orders.compare.ignoredFields)
}

/**
 * Top-level fields whose values differ, among the fields both sides carry: a webhook's data and
 * a list record of the same state may differ in shape (productUpdate adds `category{}` and
 * `brand{}` objects), never in the values they share.
 */
export const changedFields = (kind: "product" | "order", before: Record<string, unknown>, after: Record<string, unknown>): Array<string> => {
  const skip = ignored[kind]!
  const out: Array<string> = []
  for (const key of Object.keys(after)) {
    if (skip.has(key) || !(key in before)) continue
    if (stringify(before[key] as Json.JsonValue) !== stringify(after[key] as Json.JsonValue)) out.push(key)
  }
  return out
}

export interface EntityRow {
  readonly record: string
  readonly deleted: number
  readonly status?: string | null
  readonly last_event_id: string
}

export interface StockRow {
  readonly depot_id: string
  readonly remain_text: string | null
  readonly available_text: string | null
  readonly last_event_id: string
}

type Probe =
  | { readonly _tag: "product"; readonly event: DomainEvent.ProductObserved | DomainEvent.ProductAdded | DomainEvent.ProductUpdated; readonly id: string; readonly before: EntityRow | undefined }
  | { readonly _tag: "order"; readonly event: DomainEvent.OrderObserved | DomainEvent.OrderAdded | DomainEvent.OrderUpdated; readonly id: string; readonly before: EntityRow | undefined }
  | {
    readonly _tag: "deleted"
    readonly kind: "product" | "order" | "bill"
    readonly event: DomainEvent.ProductDeleted | DomainEvent.OrderDeleted | DomainEvent.BillDeleted
    readonly id: string
    readonly before: EntityRow | undefined
  }
  | {
    readonly _tag: "stock"
    readonly event: DomainEvent.InventoryObserved | DomainEvent.InventoryChanged
    readonly id: string
    /** The levels of this product (a webhook's delivery may name several products). */
    readonly items: ReadonlyArray<Records.StockLevel>
    readonly before: ReadonlyArray<StockRow>
  }

/** The record's `traceparent` (meta), carried to the changes it revealed. */
const traceOf = (meta: unknown): string | null => {
  const value = typeof meta === "object" && meta !== null ? (meta as Record<string, unknown>)[TraceContext.metaKey] : undefined
  return typeof value === "string" ? value : null
}

/**
 * What change detection reads and writes, in the projection's transaction. The SQLite file
 * answers with prepared statements (`make`); the PostgreSQL store answers from rows it read for a
 * run of records beforehand and writes what was collected afterwards (../postgres/Changes.ts).
 */
export interface Reads {
  readonly entity: (kind: "product" | "order" | "bill", appId: string, businessId: string, id: string) => EntityRow | undefined
  readonly stock: (appId: string, businessId: string, productId: string) => ReadonlyArray<StockRow>
  /** A pass saw this id (entity "" marks the pass completed). */
  readonly seen: (appId: string, businessId: string, pass: string, id: string) => void
  readonly completed: (appId: string, businessId: string, pass: string) => boolean
  /** The live rows of a kind the pass did not see and that were last received before it started. */
  readonly missing: (kind: string, appId: string, businessId: string, createdFrom: number | null, pass: string, startedAt: number) => ReadonlyArray<{ readonly id: string }>
  readonly forget: (appId: string, businessId: string, pass: string) => void
  readonly outbox: (appId: string, businessId: string, recordId: string, offset: number, body: string, trace: string | null) => void
}

/** The reads of an SQLite read-model file (prepared statements, synchronous). */
export const sqliteReads = (client: Database.Database): Reads => {
  const productRow = client.prepare<[string, string, string], EntityRow>(Products.compare.current)
  const orderRow = client.prepare<[string, string, string], EntityRow>(Orders.compare.current)
  const stockRows = client.prepare<[string, string, string], StockRow>(Inventory.compare.current)
  const billRow = client.prepare<[string, string, string], EntityRow>(BILL_CURRENT)
  const rowOf = (kind: "product" | "order" | "bill") => (kind === "product" ? productRow : kind === "order" ? orderRow : billRow)
  const seen = client.prepare("INSERT OR IGNORE INTO pass_seen (app_id, business_id, pass_id, entity_id) VALUES (?, ?, ?, ?)")
  const forget = client.prepare("DELETE FROM pass_seen WHERE app_id = ? AND business_id = ? AND pass_id = ?")
  // A completed pass keeps one row, entity "" (no entity has an empty id): a completion
  // delivered again finds it and deletes nothing more.
  const completed = client.prepare<[string, string, string], { readonly n: number }>(
    "SELECT 1 AS n FROM pass_seen WHERE app_id = ? AND business_id = ? AND pass_id = ? AND entity_id = ''"
  )
  const missingOf = new Map(
    Projections.passes.map((pass) => [pass.kind, client.prepare<[string, string, number | null, number | null, string, number], { readonly id: string }>(missingSql(pass))])
  )
  const outbox = client.prepare("INSERT INTO change_outbox (app_id, business_id, source_record_id, source_offset, body, trace) VALUES (?, ?, ?, ?, ?, ?)")
  return {
    entity: (kind, appId, businessId, id) => rowOf(kind).get(appId, businessId, id),
    stock: (appId, businessId, productId) => stockRows.all(appId, businessId, productId),
    seen: (appId, businessId, pass, id) => void seen.run(appId, businessId, pass, id),
    completed: (appId, businessId, pass) => completed.get(appId, businessId, pass) !== undefined,
    missing: (kind, appId, businessId, createdFrom, pass, startedAt) => missingOf.get(kind as never)!.all(appId, businessId, createdFrom, createdFrom, pass, startedAt),
    forget: (appId, businessId, pass) => void forget.run(appId, businessId, pass),
    outbox: (appId, businessId, recordId, offset, body, trace) => void outbox.run(appId, businessId, recordId, offset, body, trace)
  }
}

export const BILL_CURRENT = "SELECT record, deleted, last_event_id FROM bills WHERE app_id = ? AND business_id = ? AND id = ?"

/**
 * The live rows of a kind a pass did not see and that were last received before it started.
 * Windowed reads (orders, bills) cover their horizon only: older rows are never candidates.
 * Stock: a product whose product/inventory item was not served (all its depot rows).
 * Binds tenant, createdFrom twice, pass id, startedAt.
 */
export const missingSql = (pass: { readonly table: string; readonly idColumn: string; readonly windowed: boolean }): string =>
  `SELECT t.${pass.idColumn} AS id FROM ${pass.table} t WHERE t.app_id = ? AND t.business_id = ? AND t.deleted = 0
        ${pass.windowed ? "AND (? IS NULL OR t.created_at_ms >= ?)" : "AND (? IS NULL OR ? IS NULL)"}
        AND NOT EXISTS (SELECT 1 FROM pass_seen s WHERE s.app_id = t.app_id AND s.business_id = t.business_id AND s.pass_id = ? AND s.entity_id = t.${pass.idColumn})
        GROUP BY t.${pass.idColumn} HAVING MAX(t.last_received_at) < ?
        ORDER BY 1`

export const make = (client: Database.Database) => detector(sqliteReads(client))

/** Change detection over any store's reads: `before` and `after` one record's rows are written. */
export const detector = (reads: Reads) => {
  const rowOf = (kind: "product" | "order" | "bill") => ({ get: (appId: string, businessId: string, id: string) => reads.entity(kind, appId, businessId, id) })
  const productRow = rowOf("product")
  const orderRow = rowOf("order")
  const stockRows = { all: reads.stock }
  const seen = { run: reads.seen }

  /** A page the log already held, seen again by a pass: its ids count as seen. */
  const seenAgain = (record: ProjectableRecord) => {
    if (record.businessId === null) return
    let body: unknown
    try {
      body = JSON.parse(record.body)
    } catch {
      return
    }
    const decoded = EngineRecord.decodePassSeen(body)
    if (decoded._tag === "None") return
    const { ids, pass } = decoded.value
    for (const id of ids) if (id !== "") seen.run(record.appId, record.businessId, pass, id)
  }

  /**
   * Kafka mode: another server's copy of a record the projection applied at another position
   * (./redeliveries.ts), so not applied again. A page's copy is still a page of the pass that
   * read it, which may be another pass than the first copy's (another server began its own,
   * or went on with one it took over): its ids count for its own pass, else that pass's
   * completion would find them missing and delete them (docs/architecture.md §4.14, §4.19).
   */
  const copy = (record: ProjectableRecord, events: ReadonlyArray<DomainEvent.DomainEvent>): void => {
    if (record.source !== "sync" || record.businessId === null || record.type === EngineRecord.CHANGES_TYPE) return
    if (record.type === EngineRecord.PASS_SEEN_TYPE) return seenAgain(record)
    const pass = EngineRecord.passOf(record.meta)
    if (pass === undefined || reads.completed(record.appId, record.businessId, pass)) return
    for (const event of events) {
      const id = Projections.observedId(event)
      if (id !== undefined) seen.run(record.appId, record.businessId, pass, id)
    }
  }

  /** Reads the rows the record's events will touch (before its rows are written). */
  const before = (record: ProjectableRecord, events: ReadonlyArray<DomainEvent.DomainEvent>): ReadonlyArray<Probe> => {
    const probes: Array<Probe> = []
    if (record.source === "sync" && record.type === EngineRecord.PASS_SEEN_TYPE) {
      seenAgain(record)
      return probes
    }
    const isPage = record.source === "sync" && record.type !== EngineRecord.CHANGES_TYPE
    // A webhook is compared with the copy too, so that a change is one event whichever came
    // first, the webhook or a pull (docs/architecture.md §4.14).
    const isWebhook = record.source === "webhook"
    const pass = isPage ? EngineRecord.passOf(record.meta) : undefined
    const baseline = isPage && EngineRecord.isBaseline(record.meta)
    for (const event of events) {
      if (pass !== undefined) {
        const id = Projections.observedId(event)
        if (id !== undefined) seen.run(record.appId, record.businessId ?? "", pass, id)
      }
      if (baseline) continue
      switch (event._tag) {
        case "ProductAdded":
        case "ProductUpdated":
        case "ProductObserved": {
          // A webhook's product is compared like a pulled one; a `changes` record's is not.
          if (event._tag !== "ProductObserved" && !isWebhook) break
          const id = Records.recordId(event.product)
          if (id === undefined) break
          probes.push({ _tag: "product", event, id, before: productRow.get(event.appId, event.businessId, id) })
          break
        }
        case "ProductDeleted":
        case "OrderDeleted":
        case "BillDeleted": {
          // A delete webhook, or a deletion feed's record (docs/api-catalogue.md, "Deletion feeds").
          const feed = event._tag !== "ProductDeleted" && event.fromFeed === true
          if (!isWebhook && !feed) break
          const id = event._tag === "ProductDeleted" ? event.productId : event._tag === "OrderDeleted" ? event.orderId : event.billId
          if (id === undefined) break
          const kind = event._tag === "ProductDeleted" ? "product" : event._tag === "OrderDeleted" ? "order" : "bill"
          probes.push({ _tag: "deleted", kind, event, id, before: rowOf(kind).get(event.appId, event.businessId, id) })
          break
        }
        case "InventoryChanged": {
          if (!isWebhook) break
          // One probe per product the delivery names.
          const byProduct = new Map<string, Array<Records.StockLevel>>()
          for (const level of event.items) {
            const list = byProduct.get(level.productId) ?? []
            list.push(level)
            byProduct.set(level.productId, list)
          }
          for (const [id, items] of byProduct) probes.push({ _tag: "stock", event, id, items, before: stockRows.all(event.appId, event.businessId, id) })
          break
        }
        case "OrderObserved":
        case "OrderAdded":
        case "OrderUpdated": {
          if (record.type === EngineRecord.CHANGES_TYPE) break
          const id = Records.orderIdOf(event.order)
          if (id === undefined) break
          probes.push({ _tag: "order", event, id, before: orderRow.get(event.appId, event.businessId, id) })
          break
        }
        case "InventoryObserved": {
          const id = event.items[0]?.productId
          if (id === undefined) break
          probes.push({ _tag: "stock", event, id, items: event.items, before: stockRows.all(event.appId, event.businessId, id) })
          break
        }
        default:
          break
      }
    }
    return probes
  }

  /** A row's record, parsed losslessly (ids past 2^53 compare digit for digit). */
  const parse = (text: string): Record<string, unknown> => {
    const value = Json.parse(text)
    if (value._tag === "Failure") return {}
    const v = value.success
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
  }

  /** The JSON text of a change entry; records go in as the row holds them (lossless). */
  const entry = (fields: Record<string, unknown>, rawName?: "product" | "order" | "item", rawText?: string): string =>
    EngineRecord.changeEntry(fields, rawName === undefined || rawText === undefined ? undefined : { name: rawName, text: rawText })

  /** Compares the touched rows with what they were, and writes the changes found. */
  const after = (record: ProjectableRecord, events: ReadonlyArray<DomainEvent.DomainEvent>, probes: ReadonlyArray<Probe>): number => {
    const changes: Array<string> = []
    // What told us: a change a webhook revealed keeps "webhook" as its source.
    const origin = record.source === "webhook" ? { origin: "webhook" } : {}
    for (const probe of probes) {
      const e = probe.event
      if (probe._tag === "product") {
        const now = productRow.get(e.appId, e.businessId, probe.id)
        if (now === undefined || now.last_event_id !== e.id) continue
        const b = probe.before
        if (b === undefined || b.deleted === 1) {
          // New to the copy; a webhook keeps its own word for it.
          changes.push(entry(e._tag === "ProductUpdated" ? { change: "ProductUpdated", changedFields: [], ...origin } : { change: "ProductAdded", ...origin }, "product", now.record))
          continue
        }
        if (b.record === now.record) continue
        const fields = changedFields("product", parse(b.record), parse(now.record))
        if (fields.length > 0) changes.push(entry({ change: "ProductUpdated", changedFields: fields, ...origin }, "product", now.record))
      } else if (probe._tag === "order") {
        const now = orderRow.get(e.appId, e.businessId, probe.id)
        if (now === undefined || now.last_event_id !== e.id) continue
        const b = probe.before
        if (b === undefined || b.deleted === 1) {
          changes.push(entry(e._tag === "OrderUpdated" ? { change: "OrderUpdated", changedFields: [], ...origin } : { change: "OrderAdded", ...origin }, "order", now.record))
          continue
        }
        if (b.record !== now.record) {
          const fields = changedFields("order", parse(b.record), parse(now.record))
          if (fields.length > 0) changes.push(entry({ change: "OrderUpdated", changedFields: fields, ...origin }, "order", now.record))
        }
        if ((b.status ?? null) !== (now.status ?? null)) {
          changes.push(entry({ change: "OrderStatusChanged", orderId: probe.id, from: b.status ?? null, to: now.status ?? null, ...origin }, "order", now.record))
        }
      } else if (probe._tag === "deleted") {
        // A delete webhook is a change only when the copy still held the entity: after a pass
        // found it gone (or a first webhook deleted it), a second one is the same change.
        const now = rowOf(probe.kind).get(e.appId, e.businessId, probe.id)
        if (now === undefined || now.last_event_id !== e.id || now.deleted !== 1) continue
        if (probe.before !== undefined && probe.before.deleted === 1) continue
        const d = probe.event
        if (d._tag !== "ProductDeleted" && d.fromFeed === true) {
          // A feed's deletion is a change only for a record the copy held live: its first read
          // lists deletions from before the copy began, which delete nothing of it.
          if (probe.before === undefined) continue
          const who = { ...(d.deletedAt === undefined ? {} : { deletedAt: d.deletedAt }), ...(d.deletedBy === undefined ? {} : { deletedBy: d.deletedBy }) }
          changes.push(JSON.stringify(d._tag === "OrderDeleted"
            ? { change: "OrderDeleted", orderId: probe.id, reason: "deletion feed", ...who }
            : { change: "BillDeleted", billId: probe.id, reason: "deletion feed", ...who }))
          continue
        }
        changes.push(JSON.stringify(probe.kind === "product"
          ? { change: "ProductDeleted", productId: probe.id, reason: "webhook", ...origin }
          : { change: "OrderDeleted", orderId: probe.id, reason: "webhook", ...origin }))
      } else {
        // Compared row by row, before and after: a level the conflict rule refused (older than
        // the copy) changed nothing.
        const old = new Map(probe.before.map((r) => [r.depot_id, r]))
        const now = new Map(stockRows.all(e.appId, e.businessId, probe.id).map((r) => [r.depot_id, r]))
        const differs = probe.items.some((level) => {
          const row = now.get(level.depotId)
          if (row === undefined || row.last_event_id !== e.id) return false
          const was = old.get(level.depotId)
          return was === undefined || was.remain_text !== row.remain_text || was.available_text !== row.available_text
        })
        if (differs) changes.push(entry({ change: "InventoryChanged", productId: probe.id, ...origin }, "item", stringify(rawItem(probe.items))))
      }
    }
    for (const event of events) {
      if (event._tag !== "SyncPassCompleted") continue
      if (reads.completed(event.appId, event.businessId, event.passId)) continue
      if (!DomainEvent.isDeletableKind(event.kind)) continue
      const deletion = DomainEvent.deletionOf[event.kind]
      const rows = reads.missing(event.kind, event.appId, event.businessId, event.createdFrom ?? null, event.passId, event.startedAt)
      const reason = `not served by full pass ${event.passId}`
      for (const { id } of rows) changes.push(JSON.stringify({ change: deletion.change, [deletion.idField]: id, reason }))
      reads.forget(event.appId, event.businessId, event.passId)
      reads.seen(event.appId, event.businessId, event.passId, "")
    }
    if (changes.length === 0) return 0
    reads.outbox(record.appId, record.businessId ?? "", record.id, record.offset, EngineRecord.changesBody(changes), traceOf(record.meta))
    return changes.length
  }

  return { before, after, copy }
}

export type Detector = ReturnType<typeof detector>

/** One product's stock item as the page or webhook carried it (each level keeps its raw depot entry). */
const rawItem = (items: ReadonlyArray<Records.StockLevel>): unknown => {
  const first = items[0]!
  // One level per depot listed, or a single level of totals (depotId "").
  return first.depotId === ""
    ? { productId: first.productId, inventory: first.raw }
    : { productId: first.productId, inventory: { depots: items.map((l) => l.raw) } }
}

export type Changes = ReturnType<typeof make>
