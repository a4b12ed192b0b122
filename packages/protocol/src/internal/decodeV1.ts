/**
 * Version 1 of the record decoder: a log record (a webhook body, a list page, a record of the
 * engine's own) into domain events. Pure; see DomainEvent.ts for the versioning.
 */
import { Option, Result, Schema } from "effect"
import * as EngineRecord from "../EngineRecord.ts"
import * as EngineRecordCommands from "../EngineRecordCommands.ts"
import * as Envelope from "../Envelope.ts"
import * as Ids from "../Ids.ts"
import * as Json from "../Json.ts"
import * as Records from "../Records.ts"
import * as Webhook from "../Webhook.ts"
import type { Base, DomainEvent, RawRecord, UnknownEvent } from "./events.ts"

/** The deletion changes without a webhook twin, by change name. */
const plainDeletions = {
  CustomerDeleted: "customerId",
  BillDeleted: "billId",
  DepotDeleted: "depotId",
  CategoryDeleted: "categoryId",
  BrandDeleted: "brandId",
  InventoryDeleted: "productId"
} as const

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
      // An item with a flat depotId (an undocumented shape) is kept as an UnknownEvent, never
      // read as the product's totals (depot ""): its numbers may be one depot's.
      const flat = d.data.filter(Webhook.isFlatDepotItem)
      const items = d.data.filter((item) => !Webhook.isFlatDepotItem(item)).flatMap((item) =>
        Records.stockLevels(Records.recordId(item, "productId") ?? Records.recordId(item, "id"), item, item.updatedAt ?? undefined))
      const changed: ReadonlyArray<DomainEvent> = items.length > 0 || flat.length === 0 ? [{ ...b, _tag: "InventoryChanged", items }] : []
      return [
        ...changed,
        ...flat.map((item, i) =>
          unknownEvent(record, i + 1, "inventoryChange item with a flat depotId beside the product and no depots[] (undocumented shape; not applied)", item)
        )
      ]
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

const observed = (record: RawRecord, entity: EngineRecord.Entity, businessId: Ids.BusinessId, item: unknown, index: number): DomainEvent => {
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
    case "orderDeletion":
    case "billDeletion": {
      // order/deleted, bill/deleted: `id` the deleted record, `createdAt` when (unix s), `createdById` who.
      if (typeof item !== "object" || item === null || Array.isArray(item)) return bad("record is not an object")
      const r = item as Records.AnyRecord
      const id = Records.recordId(r, entity.idField)
      if (id === undefined) return bad("deletion without id")
      const seconds = r["createdAt"]
      const at = typeof seconds === "number" && Number.isFinite(seconds) ? seconds * 1000 : typeof seconds === "string" && /^\d+$/.test(seconds) ? Number(seconds) * 1000 : undefined
      const by = Records.recordId(r, "createdById")
      const who = { ...(at === undefined ? {} : { deletedAt: at }), ...(by === undefined ? {} : { deletedBy: by }), fromFeed: true as const }
      return entity.kind === "orderDeletion"
        ? { ...b, _tag: "OrderDeleted", orderId: id, data: r, ...who }
        : { ...b, _tag: "BillDeleted", billId: id, data: r, ...who }
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

/** A change entry's who and when (a deletion feed's), when it names them. */
const deletedBy = (entry: Record<string, unknown>) => ({
  ...(typeof entry["deletedAt"] === "number" ? { deletedAt: entry["deletedAt"] } : {}),
  ...(typeof entry["deletedBy"] === "string" ? { deletedBy: entry["deletedBy"] } : {})
})

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
        // A feed's who and when are kept in the data too: the tombstone's record holds them.
        return { ...b, _tag: "OrderDeleted", orderId: str(entry["orderId"]), data: { reason: entry["reason"] ?? null, ids: [entry["orderId"]], ...deletedBy(entry) }, ...deletedBy(entry) }
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
        const data = { reason: entry["reason"] ?? null, ids: [id], ...(change === "BillDeleted" ? deletedBy(entry) : {}) }
        switch (change) {
          case "CustomerDeleted":
            return { ...b, _tag: change, customerId: id, data }
          case "BillDeleted":
            return { ...b, _tag: change, billId: id, data, ...deletedBy(entry) }
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

const fromCommand = (record: RawRecord): ReadonlyArray<DomainEvent> => {
  const businessId = Ids.normalize(record.businessId)
  if (businessId === undefined) return [unknownEvent(record, 0, "command record without businessId", undefined)]
  const transition = EngineRecordCommands.decodeText(record.body)
  if (Option.isNone(transition)) return [unknownEvent(record, 0, "command record of an unknown shape", record.body)]
  return [{ ...base(record, 0, businessId), _tag: "CommandTransitioned", transition: transition.value }]
}

/** Version 1 of the record decoder. */
export const decodeV1 = (record: RawRecord): ReadonlyArray<DomainEvent> => {
  switch (record.source) {
    case "webhook":
      return fromWebhook(record)
    case "sync":
      if (record.type === EngineRecord.CHANGES_TYPE) return fromChanges(record)
      if (record.type === EngineRecord.PASS_TYPE) return fromPass(record)
      if (record.type === EngineRecord.PASS_SEEN_TYPE) return []
      return fromSync(record)
    case "system":
      if (record.type === EngineRecordCommands.COMMAND_TYPE) return fromCommand(record)
      // Notes of our own (locks, warnings, retries) are for audit; they change no read model.
      return []
  }
}
