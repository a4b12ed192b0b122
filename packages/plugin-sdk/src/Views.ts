/**
 * The read-model rows a handler's queries return (`ctx.query`), as the SDK promises them to
 * plugins. Written here rather than imported from the read models so that a plugin depends on
 * the SDK alone (no storage driver); the runtime's adapter is checked by the compiler against
 * the read models' own types, so the two cannot drift apart.
 *
 * `record` (and a document's `body`) is the entity as received, parsed losslessly (integers
 * beyond 2^53 are bigints); the other fields are the columns people filter on.
 */
import type { Json } from "@ocs/protocol"

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  /** Pass as `after` for the next page; undefined when this page was the last. */
  readonly next: string | undefined
}

export interface PageOptions {
  /** Default 100, at most 1000. */
  readonly limit?: number | undefined
  /** The `next` of the previous page. */
  readonly after?: string | undefined
}

/** Where a row's current version came from in the log. */
export interface Bookkeeping {
  readonly appId: string
  readonly businessId: string
  readonly lastEventId: string
  readonly lastOffset: number
  readonly lastIndex: number
  readonly lastSource: string
  readonly lastReceivedAt: number
}

export interface Versioned {
  readonly updatedAt: string | null
  readonly updatedAtMs: number | null
}

export interface Product extends Bookkeeping, Versioned {
  readonly id: string
  readonly appProductId: string | null
  readonly code: string | null
  readonly barcode: string | null
  readonly name: string | null
  readonly price: number | null
  readonly priceText: string | null
  readonly categoryId: string | null
  readonly brandId: string | null
  readonly record: Json.JsonValue
  /** A tombstone: the product was deleted (content fields are null). */
  readonly deleted: boolean
}

export interface StockLevel extends Bookkeeping, Versioned {
  readonly productId: string
  /** "" for the product's totals. */
  readonly depotId: string
  readonly remain: number | null
  readonly remainText: string | null
  readonly available: number | null
  readonly availableText: string | null
  readonly record: Json.JsonValue
  readonly deleted: boolean
}

export interface Order extends Bookkeeping, Versioned {
  readonly id: string
  readonly appOrderId: string | null
  readonly type: string | null
  readonly status: string | null
  readonly saleChannel: string | null
  readonly depotId: string | null
  readonly customerId: string | null
  readonly customerName: string | null
  readonly customerMobile: string | null
  readonly total: number | null
  readonly totalText: string | null
  readonly lineCount: number
  readonly createdAt: string | null
  readonly createdAtMs: number | null
  readonly record: Json.JsonValue
  readonly deleted: boolean
}

export interface OrderItem {
  readonly appId: string
  readonly businessId: string
  readonly orderId: string
  /** Position in the order's `products` array, from 0. */
  readonly line: number
  readonly productId: string | null
  readonly code: string | null
  readonly name: string | null
  readonly quantity: number | null
  readonly price: number | null
  readonly discount: number | null
  readonly total: number | null
  readonly record: Json.JsonValue
}

export type OrderDetail = Order & { readonly items: ReadonlyArray<OrderItem> }

export interface Payment extends Bookkeeping, Versioned {
  readonly id: string
  readonly orderId: string | null
  readonly invoiceId: string | null
  readonly amount: number | null
  readonly amountText: string | null
  readonly method: string | null
  readonly record: Json.JsonValue
}

/** A resource without a typed model (invoices, warranty slips, ...). */
export interface Document extends Bookkeeping, Versioned {
  readonly kind: string
  readonly id: string
  readonly body: Json.JsonValue
}

export interface ProductQuery extends PageOptions {
  /** Case-insensitive (ASCII) substring of name, code, barcode or appProductId. */
  readonly search?: string | undefined
  readonly includeDeleted?: boolean | undefined
}

export interface OrderQuery extends PageOptions {
  /** `info.status` code, e.g. "54" (new). */
  readonly status?: string | undefined
  readonly saleChannel?: string | undefined
  readonly depotId?: string | undefined
  readonly customerMobile?: string | undefined
  /** Inclusive bounds (epoch ms). */
  readonly createdFromMs?: number | undefined
  readonly createdToMs?: number | undefined
  readonly updatedFromMs?: number | undefined
  readonly updatedToMs?: number | undefined
  readonly appOrderId?: string | undefined
  readonly includeDeleted?: boolean | undefined
}

export interface InventoryQuery {
  readonly productId?: string | undefined
  /** "" for products' totals (levels that name no depot). */
  readonly depotId?: string | undefined
}

export interface PaymentQuery extends PageOptions {
  readonly orderId?: string | undefined
  readonly invoiceId?: string | undefined
}

export interface Counts {
  readonly products: number
  readonly deletedProducts: number
  readonly inventory: number
  readonly orders: number
  readonly deletedOrders: number
  readonly bills: number
  readonly deletedBills: number
  readonly customers: number
  readonly depots: number
  readonly categories: number
  readonly brands: number
  readonly payments: number
  readonly documents: number
  readonly unknownEvents: number
}
