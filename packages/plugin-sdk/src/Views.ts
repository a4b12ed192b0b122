/**
 * The read-model rows a handler's queries return (`ctx.query`), as the SDK promises them to
 * plugins. Written here rather than imported from the read models so that a plugin depends on
 * the SDK alone (no storage driver); the runtime's adapter is checked by the compiler against
 * the read models' own types, so the two cannot drift apart. The pages, query options and
 * counts are the read API's own, from `@ocs/protocol` (pure types, no driver either).
 *
 * `record` (and a document's `body`) is the entity as received, parsed losslessly (integers
 * beyond 2^53 are bigints); the other fields are the columns people filter on.
 */
import type { Json } from "@ocs/protocol"

export type { Counts, InventoryQuery, OrderQuery, Page, PageOptions, PaymentQuery, ProductQuery } from "@ocs/protocol/ReadQueries"

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
