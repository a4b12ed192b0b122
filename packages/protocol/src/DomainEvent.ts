/**
 * Domain events: what read models and plugins consume.
 *
 * The event log keeps every record exactly as received (a webhook body, a page of a list
 * response, a note of our own). Meaning is derived from it by a versioned decoder, so that a
 * fixed decoder can be replayed over history. Each domain event carries its tenant, its
 * source, when it was received, and a stable id (`<record id>:<index>`) that consumers use for
 * idempotency.
 */
import { Option, Result, Schema } from "effect"
import * as EngineRecord from "./EngineRecord.ts"
import * as Envelope from "./Envelope.ts"
import * as Ids from "./Ids.ts"
import * as Json from "./Json.ts"
import * as Records from "./Records.ts"
import * as Webhook from "./Webhook.ts"

export type Source = "webhook" | "sync" | "system"

/** The parts of a log record the decoder reads (the event log's record has more). */
export interface RawRecord {
  /** The record's id (UUIDv7). */
  readonly id: string
  readonly offset?: bigint | number | undefined
  readonly appId: string
  /** Null for records that belong to no business (webhooksEnabled). */
  readonly businessId: string | null
  readonly source: Source
  /** The webhook event name, the sync operation key, or a system note's type. */
  readonly type: string
  /** Milliseconds since the epoch. */
  readonly receivedAt: number
  /** The body exactly as received. */
  readonly body: string
  /** For sync records: `{ entity: { kind, idField, updatedAtField? } }` (see `syncMeta`). */
  readonly meta?: unknown
}

interface Base {
  /** Stable: `<record id>:<index within the record>`. */
  readonly id: string
  readonly recordId: string
  readonly appId: Ids.AppId
  readonly businessId: Ids.BusinessId
  readonly source: Source
  readonly receivedAt: number
}

export interface ProductAdded extends Base { readonly _tag: "ProductAdded"; readonly product: Records.Product }
export interface ProductUpdated extends Base {
  readonly _tag: "ProductUpdated"
  readonly product: Records.Product
  /** Found by a pull (a `changes` record): the top-level fields that differ from the copy. */
  readonly changedFields?: ReadonlyArray<string> | undefined
}
export interface ProductDeleted extends Base { readonly _tag: "ProductDeleted"; readonly productId: string | undefined; readonly data: unknown }
/** Stock changed: one level per product and depot the delivery names. */
export interface InventoryChanged extends Base { readonly _tag: "InventoryChanged"; readonly items: ReadonlyArray<Records.StockLevel> }
export interface OrderAdded extends Base { readonly _tag: "OrderAdded"; readonly order: Records.Order; readonly appOrderId: string | undefined }
export interface OrderUpdated extends Base {
  readonly _tag: "OrderUpdated"
  readonly order: Records.Order
  readonly appOrderId: string | undefined
  /** Found by a pull (a `changes` record): the top-level fields that differ from the copy. */
  readonly changedFields?: ReadonlyArray<string> | undefined
}
/**
 * An order's status moved (compared with the copy, whatever told us: a webhook or a pull).
 * Comes from a `changes` record, beside the OrderUpdated of the same change.
 */
export interface OrderStatusChanged extends Base {
  readonly _tag: "OrderStatusChanged"
  readonly orderId: string
  readonly from: string | undefined
  readonly to: string | undefined
  readonly order: Records.Order
}
export interface OrderDeleted extends Base { readonly _tag: "OrderDeleted"; readonly orderId: string | undefined; readonly data: unknown }
export interface PaymentReceived extends Base { readonly _tag: "PaymentReceived"; readonly payment: Records.Payment }
/** The business removed the application: no more deliveries, and its token stops working. */
export interface AppUninstalled extends Base { readonly _tag: "AppUninstalled"; readonly data: unknown }

/** Webhooks were enabled, or the service checked the callback URL. It has no business. */
export interface WebhooksEnabled {
  readonly _tag: "WebhooksEnabled"
  readonly id: string
  readonly recordId: string
  readonly appId: Ids.AppId
  readonly businessId: null
  readonly source: Source
  readonly receivedAt: number
  /** id -> event name, as received. */
  readonly registeredEvents: Readonly<Record<string, string>>
}

/** A record seen by a sync (list page): the current state of one entity at `receivedAt`. */
export interface ProductObserved extends Base { readonly _tag: "ProductObserved"; readonly product: Records.Product }
export interface OrderObserved extends Base { readonly _tag: "OrderObserved"; readonly order: Records.Order; readonly appOrderId: string | undefined }
export interface PaymentObserved extends Base { readonly _tag: "PaymentObserved"; readonly payment: Records.Payment }
/** A product's stock as a pull saw it: one level per depot listed (or the totals). */
export interface InventoryObserved extends Base { readonly _tag: "InventoryObserved"; readonly items: ReadonlyArray<Records.StockLevel> }
export interface BillObserved extends Base { readonly _tag: "BillObserved"; readonly bill: Records.Bill }
export interface CustomerObserved extends Base { readonly _tag: "CustomerObserved"; readonly customer: Records.Customer }
export interface DepotObserved extends Base { readonly _tag: "DepotObserved"; readonly depot: Records.Depot }
export interface CategoryObserved extends Base { readonly _tag: "CategoryObserved"; readonly category: Records.Category }
export interface BrandObserved extends Base { readonly _tag: "BrandObserved"; readonly brand: Records.Brand }
/** A record of a resource without a typed read model (invoices, warranty slips, ...). */
export interface DocumentObserved extends Base {
  readonly _tag: "DocumentObserved"
  readonly kind: string
  readonly documentId: string | undefined
  readonly updatedAt: unknown
  readonly document: Records.AnyRecord
}

/**
 * A full pass over a resource finished without error and without filters: every entity of
 * `kind` it did not see (and that no later record touched) is gone from the service. The read
 * models answer with deletion events in a `changes` record (docs/architecture.md §4.14).
 */
export interface SyncPassCompleted extends Base {
  readonly _tag: "SyncPassCompleted"
  readonly kind: string
  readonly passId: string
  /** When the pass started (ms): only entities last received before it can be missing. */
  readonly startedAt: number
  /** Windowed reads: entities created before this (ms) were not read, so are not missing. */
  readonly createdFrom: number | undefined
}

/**
 * Deletions of entities the service sends no webhook about (customers, bills, depots,
 * categories, brands), or the stock rows of a product product/inventory no longer serves: found
 * only by a complete full pass (docs/architecture.md §4.14), so they come from `changes` records.
 * `data` says why (`{ reason, ids }`).
 */
export interface CustomerDeleted extends Base { readonly _tag: "CustomerDeleted"; readonly customerId: string; readonly data: unknown }
export interface BillDeleted extends Base { readonly _tag: "BillDeleted"; readonly billId: string; readonly data: unknown }
export interface DepotDeleted extends Base { readonly _tag: "DepotDeleted"; readonly depotId: string; readonly data: unknown }
export interface CategoryDeleted extends Base { readonly _tag: "CategoryDeleted"; readonly categoryId: string; readonly data: unknown }
export interface BrandDeleted extends Base { readonly _tag: "BrandDeleted"; readonly brandId: string; readonly data: unknown }
/** Every depot's stock row of the product is gone (its product/inventory item is no longer served). */
export interface InventoryDeleted extends Base { readonly _tag: "InventoryDeleted"; readonly productId: string; readonly data: unknown }

/** A record the decoder cannot give meaning to: kept, with the reason, never dropped. */
export interface UnknownEvent {
  readonly _tag: "UnknownEvent"
  readonly id: string
  readonly recordId: string
  readonly appId: string
  readonly businessId: string | null
  readonly source: Source
  readonly receivedAt: number
  readonly type: string
  readonly reason: string
  readonly data: unknown
}

export type DomainEvent =
  | ProductAdded
  | ProductUpdated
  | ProductDeleted
  | InventoryChanged
  | OrderAdded
  | OrderUpdated
  | OrderDeleted
  | OrderStatusChanged
  | PaymentReceived
  | AppUninstalled
  | WebhooksEnabled
  | ProductObserved
  | OrderObserved
  | PaymentObserved
  | InventoryObserved
  | BillObserved
  | CustomerObserved
  | DepotObserved
  | CategoryObserved
  | BrandObserved
  | DocumentObserved
  | SyncPassCompleted
  | CustomerDeleted
  | BillDeleted
  | DepotDeleted
  | CategoryDeleted
  | BrandDeleted
  | InventoryDeleted
  | UnknownEvent

export type Tag = DomainEvent["_tag"]
export type Of<T extends Tag> = Extract<DomainEvent, { readonly _tag: T }>

export const tags: ReadonlyArray<Tag> = [
  "ProductAdded",
  "ProductUpdated",
  "ProductDeleted",
  "InventoryChanged",
  "OrderAdded",
  "OrderUpdated",
  "OrderDeleted",
  "OrderStatusChanged",
  "PaymentReceived",
  "AppUninstalled",
  "WebhooksEnabled",
  "ProductObserved",
  "OrderObserved",
  "PaymentObserved",
  "InventoryObserved",
  "BillObserved",
  "CustomerObserved",
  "DepotObserved",
  "CategoryObserved",
  "BrandObserved",
  "DocumentObserved",
  "SyncPassCompleted",
  "CustomerDeleted",
  "BillDeleted",
  "DepotDeleted",
  "CategoryDeleted",
  "BrandDeleted",
  "InventoryDeleted",
  "UnknownEvent"
]

// The engine's own records (changes, passes, page meta) are declared in EngineRecord.ts; these
// names stay for the code that reads them from here.
export const CHANGES_TYPE = EngineRecord.CHANGES_TYPE
export const PASS_TYPE = EngineRecord.PASS_TYPE
export const PASS_SEEN_TYPE = EngineRecord.PASS_SEEN_TYPE
export type ChangeEntry = EngineRecord.ChangeEntry

/**
 * The kinds a complete full pass can find deleted, with the deletion it gives and the field that
 * names the entity (docs/architecture.md §4.14). `inventory`: a product/inventory item, by product.
 */
export const deletionOf = {
  product: { change: "ProductDeleted", idField: "productId" },
  order: { change: "OrderDeleted", idField: "orderId" },
  customer: { change: "CustomerDeleted", idField: "customerId" },
  bill: { change: "BillDeleted", idField: "billId" },
  depot: { change: "DepotDeleted", idField: "depotId" },
  category: { change: "CategoryDeleted", idField: "categoryId" },
  brand: { change: "BrandDeleted", idField: "brandId" },
  inventory: { change: "InventoryDeleted", idField: "productId" }
} as const
export type DeletableKind = keyof typeof deletionOf
export const isDeletableKind = (kind: string | undefined): kind is DeletableKind => kind !== undefined && Object.hasOwn(deletionOf, kind)

/** The deletion changes without a webhook twin, by change name. */
const plainDeletions = {
  CustomerDeleted: "customerId",
  BillDeleted: "billId",
  DepotDeleted: "depotId",
  CategoryDeleted: "categoryId",
  BrandDeleted: "brandId",
  InventoryDeleted: "productId"
} as const

/** What a completed pass says (the body of a `PASS_TYPE` record). */
export type PassBody = EngineRecord.PassBody

/** Meta a sync writes beside a list page so the page decodes without outside knowledge. */
export interface SyncMeta {
  readonly entity: EngineRecord.Entity
}

export const syncMeta = (entity: SyncMeta["entity"]): SyncMeta => ({ entity })

// ---------------------------------------------------------------------------------------------
// The decoder, version 1.
// ---------------------------------------------------------------------------------------------

const unknownEvent = (record: RawRecord, index: number, reason: string, data: unknown): UnknownEvent => ({
  _tag: "UnknownEvent",
  id: `${record.id}:${index}`,
  recordId: record.id,
  appId: record.appId,
  businessId: record.businessId,
  source: record.source,
  receivedAt: record.receivedAt,
  type: record.type,
  reason,
  data
})

const base = (record: RawRecord, index: number, businessId: Ids.BusinessId): Base => ({
  id: `${record.id}:${index}`,
  recordId: record.id,
  appId: record.appId as Ids.AppId,
  businessId,
  source: record.source,
  receivedAt: record.receivedAt
})

const parsed = (record: RawRecord): Result.Result<Json.JsonValue, string> =>
  Result.mapError(Json.parse(record.body), (e) => e.message)

const fromWebhook = (record: RawRecord): ReadonlyArray<DomainEvent> => {
  const value = parsed(record)
  if (Result.isFailure(value)) return [unknownEvent(record, 0, value.failure, record.body)]
  const delivery = Webhook.decode(value.success)
  if (Result.isFailure(delivery)) return [unknownEvent(record, 0, delivery.failure.message, value.success)]
  const d = delivery.success
  if (d._tag === "Unknown") return [unknownEvent(record, 0, `event ${JSON.stringify(d.event)} is not in the catalogue`, d.data)]
  if (d.event === "webhooksEnabled") {
    return [{
      _tag: "WebhooksEnabled",
      id: `${record.id}:0`,
      recordId: record.id,
      appId: record.appId as Ids.AppId,
      businessId: null,
      source: record.source,
      receivedAt: record.receivedAt,
      registeredEvents: d.data?.registeredEvents ?? {}
    }]
  }
  const businessId = d.businessId ?? Ids.normalize(record.businessId)
  if (businessId === undefined) return [unknownEvent(record, 0, `${d.event} without businessId`, value.success)]
  const b = base(record, 0, businessId)
  switch (d.event) {
    case "productAdd":
      return [{ ...b, _tag: "ProductAdded", product: d.data }]
    case "productUpdate":
      return [{ ...b, _tag: "ProductUpdated", product: d.data }]
    case "productDelete":
      // One event per id deleted; the whole list stays in `data` for audit.
      return Webhook.deletedIds(d.data).map((id, i) => ({ ...base(record, i, businessId), _tag: "ProductDeleted" as const, productId: id, data: value.success }))
    case "inventoryChange": {
      const items = d.data.flatMap((item) =>
        Records.stockLevels(Records.recordId(item, "productId") ?? Records.recordId(item, "id"), item, item.updatedAt ?? undefined))
      return [{ ...b, _tag: "InventoryChanged", items }]
    }
    case "orderAdd":
      return [{ ...b, _tag: "OrderAdded", order: d.data, appOrderId: Records.appOrderIdOf(d.data) }]
    case "orderUpdate":
    // A partial return changes the order: the data is the order as it now stands.
    case "orderPartialReturn":
      return [{ ...b, _tag: "OrderUpdated", order: d.data, appOrderId: Records.appOrderIdOf(d.data) }]
    case "orderDelete":
      return Webhook.deletedIds(d.data).map((id, i) => ({ ...base(record, i, businessId), _tag: "OrderDeleted" as const, orderId: id, data: value.success }))
    case "paymentReceived":
      return [{ ...b, _tag: "PaymentReceived", payment: d.data }]
    case "appUninstalled":
      return [{ ...b, _tag: "AppUninstalled", data: d.data }]
  }
}

const decodeProduct = Schema.decodeUnknownResult(Records.Product)
const decodeOrder = Schema.decodeUnknownResult(Records.Order)
const decodePayment = Schema.decodeUnknownResult(Records.Payment)
const decodeStock = Schema.decodeUnknownResult(Records.InventoryItem)
const decodeBill = Schema.decodeUnknownResult(Records.Bill)
const decodeCustomer = Schema.decodeUnknownResult(Records.Customer)
const decodeDepot = Schema.decodeUnknownResult(Records.Depot)
const decodeCategory = Schema.decodeUnknownResult(Records.Category)
const decodeBrand = Schema.decodeUnknownResult(Records.Brand)

const observed = (record: RawRecord, entity: SyncMeta["entity"], businessId: Ids.BusinessId, item: unknown, index: number): DomainEvent => {
  const b = base(record, index, businessId)
  const bad = (message: string) => unknownEvent(record, index, `${entity.kind}: ${message}`, item)
  switch (entity.kind) {
    case "product": {
      const r = decodeProduct(item)
      return Result.isSuccess(r) ? { ...b, _tag: "ProductObserved", product: r.success } : bad(r.failure.message)
    }
    case "order": {
      const r = decodeOrder(item)
      return Result.isSuccess(r)
        ? { ...b, _tag: "OrderObserved", order: r.success, appOrderId: Records.appOrderIdOf(r.success) }
        : bad(r.failure.message)
    }
    case "payment": {
      const r = decodePayment(item)
      return Result.isSuccess(r) ? { ...b, _tag: "PaymentObserved", payment: r.success } : bad(r.failure.message)
    }
    case "inventory": {
      const r = decodeStock(item)
      if (Result.isFailure(r)) return bad(r.failure.message)
      const productId = Records.recordId(r.success, entity.idField) ?? Records.recordId(r.success, "id")
      if (productId === undefined) return bad("stock item without product id")
      // product/inventory nests the stock in `inventory` (docs/api-catalogue.md §2.2).
      return { ...b, _tag: "InventoryObserved", items: Records.stockLevels(productId, r.success.inventory ?? r.success, r.success.updatedAt ?? undefined) }
    }
    case "bill": {
      const r = decodeBill(item)
      return Result.isSuccess(r) ? { ...b, _tag: "BillObserved", bill: r.success } : bad(r.failure.message)
    }
    case "customer": {
      const r = decodeCustomer(item)
      return Result.isSuccess(r) ? { ...b, _tag: "CustomerObserved", customer: r.success } : bad(r.failure.message)
    }
    case "depot": {
      const r = decodeDepot(item)
      return Result.isSuccess(r) ? { ...b, _tag: "DepotObserved", depot: r.success } : bad(r.failure.message)
    }
    case "category": {
      const r = decodeCategory(item)
      return Result.isSuccess(r) ? { ...b, _tag: "CategoryObserved", category: r.success } : bad(r.failure.message)
    }
    case "brand": {
      const r = decodeBrand(item)
      return Result.isSuccess(r) ? { ...b, _tag: "BrandObserved", brand: r.success } : bad(r.failure.message)
    }
    default: {
      if (typeof item !== "object" || item === null || Array.isArray(item)) return bad("record is not an object")
      const document = item as Records.AnyRecord
      const id = Records.recordId(document, entity.idField)
      return {
        ...b,
        _tag: "DocumentObserved",
        kind: entity.kind,
        documentId: id,
        updatedAt: entity.updatedAtField === undefined ? undefined : Records.valueAt(document, entity.updatedAtField),
        document
      }
    }
  }
}

const fromSync = (record: RawRecord): ReadonlyArray<DomainEvent> => {
  const entity = EngineRecord.entityOf(record.meta)
  if (entity === undefined) return [unknownEvent(record, 0, "sync record without meta.entity", undefined)]
  const businessId = Ids.normalize(record.businessId)
  if (businessId === undefined) return [unknownEvent(record, 0, "sync record without businessId", undefined)]
  const envelope = Envelope.decode(record.body)
  if (Result.isFailure(envelope)) return [unknownEvent(record, 0, envelope.failure.message, record.body)]
  const data = envelope.success.data
  const items = Array.isArray(data) ? data : data === undefined || data === null ? [] : [data]
  return items.map((item, i) => observed(record, entity, businessId, item, i))
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)

const fromChanges = (record: RawRecord): ReadonlyArray<DomainEvent> => {
  const businessId = Ids.normalize(record.businessId)
  if (businessId === undefined) return [unknownEvent(record, 0, "changes record without businessId", undefined)]
  const value = parsed(record)
  if (Result.isFailure(value)) return [unknownEvent(record, 0, value.failure, record.body)]
  const list = EngineRecord.changesOf(value.success)
  if (list === undefined) return [unknownEvent(record, 0, "changes record without a changes list", value.success)]
  return list.map((entry: Record<string, unknown>, i): DomainEvent => {
    // `origin`: what revealed the change (a webhook compared with the copy); else the record's source.
    const b = entry["origin"] === "webhook" ? { ...base(record, i, businessId), source: "webhook" as const } : base(record, i, businessId)
    const bad = (message: string) => unknownEvent(record, i, `changes: ${message}`, entry)
    const fields = Array.isArray(entry["changedFields"]) ? entry["changedFields"].filter((f): f is string => typeof f === "string") : []
    switch (entry["change"]) {
      case "ProductAdded":
      case "ProductUpdated": {
        const r = decodeProduct(entry["product"])
        if (Result.isFailure(r)) return bad(r.failure.message)
        return entry["change"] === "ProductAdded"
          ? { ...b, _tag: "ProductAdded", product: r.success }
          : { ...b, _tag: "ProductUpdated", product: r.success, changedFields: fields }
      }
      case "ProductDeleted":
        return { ...b, _tag: "ProductDeleted", productId: str(entry["productId"]), data: { reason: entry["reason"] ?? null, ids: [entry["productId"]] } }
      case "InventoryChanged": {
        const r = decodeStock(entry["item"])
        if (Result.isFailure(r)) return bad(r.failure.message)
        return { ...b, _tag: "InventoryChanged", items: Records.stockLevels(str(entry["productId"]), r.success.inventory ?? r.success, r.success.updatedAt ?? undefined) }
      }
      case "OrderAdded":
      case "OrderUpdated":
      case "OrderStatusChanged": {
        const r = decodeOrder(entry["order"])
        if (Result.isFailure(r)) return bad(r.failure.message)
        const appOrderId = Records.appOrderIdOf(r.success)
        if (entry["change"] === "OrderAdded") return { ...b, _tag: "OrderAdded", order: r.success, appOrderId }
        if (entry["change"] === "OrderUpdated") return { ...b, _tag: "OrderUpdated", order: r.success, appOrderId, changedFields: fields }
        const orderId = str(entry["orderId"]) ?? Records.orderIdOf(r.success)
        if (orderId === undefined) return bad("OrderStatusChanged without orderId")
        return { ...b, _tag: "OrderStatusChanged", orderId, from: str(entry["from"]), to: str(entry["to"]), order: r.success }
      }
      case "OrderDeleted":
        return { ...b, _tag: "OrderDeleted", orderId: str(entry["orderId"]), data: { reason: entry["reason"] ?? null, ids: [entry["orderId"]] } }
      case "CustomerDeleted":
      case "BillDeleted":
      case "DepotDeleted":
      case "CategoryDeleted":
      case "BrandDeleted":
      case "InventoryDeleted": {
        const change = entry["change"]
        const field = plainDeletions[change]
        const id = str(entry[field])
        if (id === undefined || id === "") return bad(`${change} without ${field}`)
        const data = { reason: entry["reason"] ?? null, ids: [id] }
        switch (change) {
          case "CustomerDeleted":
            return { ...b, _tag: change, customerId: id, data }
          case "BillDeleted":
            return { ...b, _tag: change, billId: id, data }
          case "DepotDeleted":
            return { ...b, _tag: change, depotId: id, data }
          case "CategoryDeleted":
            return { ...b, _tag: change, categoryId: id, data }
          case "BrandDeleted":
            return { ...b, _tag: change, brandId: id, data }
          case "InventoryDeleted":
            return { ...b, _tag: change, productId: id, data }
        }
      }
      default:
        return bad(`unknown change ${JSON.stringify(entry["change"])}`)
    }
  })
}

const fromPass = (record: RawRecord): ReadonlyArray<DomainEvent> => {
  const businessId = Ids.normalize(record.businessId)
  if (businessId === undefined) return [unknownEvent(record, 0, "pass record without businessId", undefined)]
  const value = parsed(record)
  if (Result.isFailure(value)) return [unknownEvent(record, 0, value.failure, record.body)]
  const body = EngineRecord.decodePass(value.success)
  if (body._tag === "None") return [unknownEvent(record, 0, "pass record without pass.id, pass.kind and pass.startedAt", value.success)]
  const pass = body.value.pass
  return [{
    ...base(record, 0, businessId),
    _tag: "SyncPassCompleted",
    kind: pass.kind,
    passId: pass.id,
    startedAt: pass.startedAt,
    createdFrom: pass.createdFrom
  }]
}

/** Version 1 of the record decoder. */
export const decodeV1 = (record: RawRecord): ReadonlyArray<DomainEvent> => {
  switch (record.source) {
    case "webhook":
      return fromWebhook(record)
    case "sync":
      if (record.type === CHANGES_TYPE) return fromChanges(record)
      if (record.type === PASS_TYPE) return fromPass(record)
      if (record.type === PASS_SEEN_TYPE) return []
      return fromSync(record)
    case "system":
      // Notes of our own (locks, warnings, retries) are for audit; they change no read model.
      return []
  }
}

export const decoders = { 1: decodeV1 } as const
export type DecoderVersion = keyof typeof decoders
export const LATEST: DecoderVersion = 1

/** Decodes a log record into domain events with the given (default: latest) decoder. */
export const decode = (record: RawRecord, version: DecoderVersion = LATEST): ReadonlyArray<DomainEvent> =>
  decoders[version](record)

/**
 * The tags the read models derive by comparing a webhook with the copy and relay in `changes`
 * records (docs/architecture.md §4.14), so that a change is one event whichever told us first.
 */
export const comparedTags: ReadonlySet<Tag> = new Set<Tag>([
  "ProductAdded",
  "ProductUpdated",
  "ProductDeleted",
  "InventoryChanged",
  "OrderAdded",
  "OrderUpdated",
  "OrderDeleted"
])

/**
 * The change stream: `decode`, less the events of `comparedTags` decoded straight from a webhook
 * record, which reach a consumer through the `changes` record the read models append for that
 * webhook (only when it changed the copy). For consumers that follow a log whose read models
 * relay their changes (the sync server's plugins): one event per change, whatever came first.
 */
export const decodeChangeStream = (record: RawRecord, version: DecoderVersion = LATEST): ReadonlyArray<DomainEvent> => {
  const events = decoders[version](record)
  return record.source === "webhook" ? events.filter((e) => !comparedTags.has(e._tag)) : events
}

/** The id of the entity an event is about, when it has one (for audit indexes). */
export const entityId = (event: DomainEvent): Option.Option<string> => {
  switch (event._tag) {
    case "ProductAdded":
    case "ProductUpdated":
    case "ProductObserved":
      return Option.fromNullishOr(Records.recordId(event.product))
    case "ProductDeleted":
      return Option.fromNullishOr(event.productId)
    case "OrderAdded":
    case "OrderUpdated":
    case "OrderObserved":
      return Option.fromNullishOr(Records.orderIdOf(event.order))
    case "OrderDeleted":
      return Option.fromNullishOr(event.orderId)
    case "OrderStatusChanged":
      return Option.some(event.orderId)
    case "PaymentReceived":
    case "PaymentObserved":
      return Option.fromNullishOr(Records.recordId(event.payment))
    case "BillObserved":
      return Option.fromNullishOr(Records.recordId(event.bill))
    case "CustomerObserved":
      return Option.fromNullishOr(Records.recordId(event.customer))
    case "DepotObserved":
      return Option.fromNullishOr(Records.recordId(event.depot))
    case "CategoryObserved":
      return Option.fromNullishOr(Records.recordId(event.category))
    case "BrandObserved":
      return Option.fromNullishOr(Records.recordId(event.brand))
    case "InventoryObserved":
    case "InventoryChanged":
      return event.items.length === 1 ? Option.some(event.items[0]!.productId) : Option.none()
    case "DocumentObserved":
      return Option.fromNullishOr(event.documentId)
    case "CustomerDeleted":
      return Option.some(event.customerId)
    case "BillDeleted":
      return Option.some(event.billId)
    case "DepotDeleted":
      return Option.some(event.depotId)
    case "CategoryDeleted":
      return Option.some(event.categoryId)
    case "BrandDeleted":
      return Option.some(event.brandId)
    case "InventoryDeleted":
      return Option.some(event.productId)
    default:
      return Option.none()
  }
}
