/**
 * Domain events: what read models and plugins consume.
 *
 * The event log keeps every record exactly as received (a webhook body, a page of a list
 * response, a note of our own). Meaning is derived from it by a versioned decoder, so that a
 * fixed decoder can be replayed over history. Each domain event carries its tenant, its
 * source, when it was received, and a stable id (`<record id>:<index>`) that consumers use for
 * idempotency.
 */
import { Option } from "effect"
import * as Records from "./Records.ts"
import { decodeV1 } from "./internal/decodeV1.ts"
import { comparedTags, type DomainEvent, type RawRecord } from "./internal/events.ts"

export * from "./internal/events.ts"
export { decodeV1 }

export const decoders = { 1: decodeV1 } as const
export type DecoderVersion = keyof typeof decoders
export const LATEST: DecoderVersion = 1

/** Decodes a log record into domain events with the given (default: latest) decoder. */
export const decode = (record: RawRecord, version: DecoderVersion = LATEST): ReadonlyArray<DomainEvent> =>
  decoders[version](record)

/**
 * The change stream: `decode`, less the events of `comparedTags` decoded straight from a webhook
 * record, which reach a consumer through the `changes` record the read models append for that
 * webhook (only when it changed the copy). For consumers that follow a log whose read models
 * relay their changes (the sync server's plugins): one event per change, whatever came first.
 */
export const decodeChangeStream = (record: RawRecord, version: DecoderVersion = LATEST): ReadonlyArray<DomainEvent> => {
  const events = decoders[version](record)
  if (record.source === "webhook") return events.filter((e) => !comparedTags.has(e._tag))
  // A deletion feed's page: its deletions reach consumers through the `changes` record too.
  return events.some(fromFeed) ? events.filter((e) => !fromFeed(e)) : events
}

const fromFeed = (e: DomainEvent): boolean => (e._tag === "OrderDeleted" || e._tag === "BillDeleted") && e.fromFeed === true

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
