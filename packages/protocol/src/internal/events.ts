/**
 * The domain events as types: what read models and plugins consume (see DomainEvent.ts).
 */
import type * as EngineRecordCommands from "../EngineRecordCommands.ts"
import type * as Ids from "../Ids.ts"
import type * as Records from "../Records.ts"

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

export interface Base {
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
/**
 * Who deleted and when, where the source says it: the deletion feeds (order/deleted,
 * bill/deleted) name both; a webhook or a full pass names neither.
 */
export interface DeletedBy {
  /** When the record was deleted (ms), per the deletion feed. */
  readonly deletedAt?: number | undefined
  /** The user who deleted it, per the deletion feed. */
  readonly deletedBy?: string | undefined
  /**
   * Decoded from a deletion feed's page: the read models compare it with the copy and relay it
   * in a `changes` record when it deleted something, so a consumer sees it once
   * (`decodeChangeStream` leaves the page's own event out).
   */
  readonly fromFeed?: true | undefined
}
export interface OrderDeleted extends Base, DeletedBy { readonly _tag: "OrderDeleted"; readonly orderId: string | undefined; readonly data: unknown }
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
export interface BillDeleted extends Base, DeletedBy { readonly _tag: "BillDeleted"; readonly billId: string; readonly data: unknown }
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

/** A transition of a command of the write path (EngineRecordCommands.ts), from the engine's own record. */
export interface CommandTransitioned extends Base {
  readonly _tag: "CommandTransitioned"
  readonly transition: EngineRecordCommands.Transition
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
  | CommandTransitioned
  | UnknownEvent

export type Tag = DomainEvent["_tag"]
export type Of<T extends Tag> = Extract<DomainEvent, { readonly _tag: T }>

const compared = ["ProductAdded", "ProductUpdated", "ProductDeleted", "InventoryChanged", "OrderAdded", "OrderUpdated", "OrderDeleted"] as const

/**
 * The tags the read models derive by comparing a webhook with the copy and relay in `changes`
 * records (docs/architecture.md §4.14), so that a change is one event whichever told us first.
 */
export const comparedTags: ReadonlySet<Tag> = new Set<Tag>(compared)

export const tags: ReadonlyArray<Tag> = [
  ...compared,
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
  "CommandTransitioned",
  "UnknownEvent"
]

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

/** The deletions only a complete full pass finds (no webhook tells them), each with its kind. */
/** The kinds of the deletion feeds' records (Operation.orderDeleted, billDeleted) and the deletion each gives. */
export const feedKinds = { orderDeletion: "OrderDeleted", billDeletion: "BillDeleted" } as const
export type FeedKind = keyof typeof feedKinds

export const passDeletions = { CustomerDeleted: "customer", BillDeleted: "bill", DepotDeleted: "depot", CategoryDeleted: "category", BrandDeleted: "brand", InventoryDeleted: "inventory" } as const
export type PassDeletion = CustomerDeleted | BillDeleted | DepotDeleted | CategoryDeleted | BrandDeleted | InventoryDeleted
export const isPassDeletion = (event: DomainEvent): event is PassDeletion => Object.hasOwn(passDeletions, event._tag)
export const isDeletableKind = (kind: string | undefined): kind is DeletableKind => kind !== undefined && Object.hasOwn(deletionOf, kind)
