/**
 * Which log records touched an entity, and what each said about it.
 *
 * A record names its entity in its `entity_id` column when its writer set one; a sync
 * page holds many entities (and a webhook may carry no entityId), so those are decoded with
 * `DomainEvent.decode` and their events matched by `DomainEvent.entityId`. Stock levels
 * (inventoryChange, inventory pages) count as touching their product, one facet per depot.
 */
import type { LogRecord } from "@ocs/event-log"
import { DomainEvent, Ids, Records } from "@ocs/protocol"
import { Option } from "effect"

/** One event of a record about the entity: its facet (product, order, stock@depot, ...) and the state it carries. */
export interface Observation {
  readonly facet: string
  readonly tag: DomainEvent.Tag
  /** Index of the event within its record (a sync page holds many). */
  readonly index: number
  readonly state: unknown
  readonly updatedAt: unknown
}

/** Ids compare in canonical form (`0042` and `42` are one id). */
export const canonical = (id: string): string => Ids.normalize(id) ?? id

const field = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined

export const observations = (record: LogRecord.LogRecord, id: string): ReadonlyArray<Observation> => {
  if (record.source === "system") return []
  const out: Array<Observation> = []
  const events = DomainEvent.decode(record)
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    if (event._tag === "InventoryChanged" || event._tag === "InventoryObserved") {
      // One level per product and depot; a level without a depot is the product's totals ("-").
      for (const level of event.items) {
        if (level.productId === id) {
          out.push({ facet: `stock@${level.depotId === "" ? "-" : level.depotId}`, tag: event._tag, index: i, state: level.raw, updatedAt: level.updatedAt })
        }
      }
      continue
    }
    const eid = DomainEvent.entityId(event)
    if (Option.isNone(eid) || eid.value !== id) continue
    switch (event._tag) {
      case "ProductAdded":
      case "ProductUpdated":
      case "ProductObserved":
        out.push({ facet: "product", tag: event._tag, index: i, state: event.product, updatedAt: event.product.updatedAt })
        break
      case "ProductDeleted":
        out.push({ facet: "product", tag: event._tag, index: i, state: { ...(event.data as object), deleted: true }, updatedAt: field(event.data, "updatedAt") })
        break
      case "OrderAdded":
      case "OrderUpdated":
      case "OrderObserved":
        out.push({ facet: "order", tag: event._tag, index: i, state: event.order, updatedAt: Records.orderSummary(event.order).updatedAt })
        break
      case "OrderDeleted":
        out.push({ facet: "order", tag: event._tag, index: i, state: { ...(event.data as object), deleted: true }, updatedAt: field(event.data, "updatedAt") })
        break
      case "PaymentReceived":
      case "PaymentObserved":
        out.push({ facet: "payment", tag: event._tag, index: i, state: event.payment, updatedAt: event.payment.updatedAt })
        break
      case "BillObserved":
        out.push({ facet: "bill", tag: event._tag, index: i, state: event.bill, updatedAt: undefined })
        break
      case "CustomerObserved":
        out.push({ facet: "customer", tag: event._tag, index: i, state: event.customer, updatedAt: event.customer.updatedAt })
        break
      case "DepotObserved":
        out.push({ facet: "depot", tag: event._tag, index: i, state: event.depot, updatedAt: undefined })
        break
      case "CategoryObserved":
        out.push({ facet: "category", tag: event._tag, index: i, state: event.category, updatedAt: undefined })
        break
      case "BrandObserved":
        out.push({ facet: "brand", tag: event._tag, index: i, state: event.brand, updatedAt: undefined })
        break
      case "DocumentObserved":
        out.push({ facet: `document:${event.kind}`, tag: event._tag, index: i, state: event.document, updatedAt: event.updatedAt })
        break
      default:
        // Deletions a complete full pass found (docs/architecture.md §4.14).
        if (DomainEvent.isPassDeletion(event)) {
          const kind = DomainEvent.passDeletions[event._tag]
          out.push({ facet: kind === "inventory" ? "stock" : kind, tag: event._tag, index: i, state: { ...(event.data as object), deleted: true }, updatedAt: undefined })
        }
        break
    }
  }
  return out
}

/** The record is about the entity: by its indexed entity_id, or by one of its decoded events. */
export const touches = (record: LogRecord.LogRecord, id: string): boolean =>
  record.entityId === id || (record.entityId === null && observations(record, id).length > 0)
