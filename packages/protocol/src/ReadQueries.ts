/**
 * The read API's pages, query options and counts: what the read models answer and what a
 * plugin's handler asks through the SDK (`ctx.query`). Pure types, here so that both speak of
 * one shape and a plugin needs no storage driver to name them.
 */

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  /** Pass as `after` for the next page; undefined when this page was the last. */
  readonly next: string | undefined
}

export interface PageOptions {
  /** Default 100, at most 1000. */
  readonly limit?: number | undefined
  /** The `next` of the previous page (the last id seen; ids sort as text). */
  readonly after?: string | undefined
}

export interface ProductQuery extends PageOptions {
  /** Case-insensitive (ASCII) substring of name, code, barcode or appProductId. */
  readonly search?: string | undefined
  readonly includeDeleted?: boolean | undefined
}

export interface OrderQuery extends PageOptions {
  /** `info.status` code, e.g. "54" (new); v2 orders: the status string as received. */
  readonly status?: string | undefined
  /** `channel.saleChannel` code, e.g. "42" (Shopee). */
  readonly saleChannel?: string | undefined
  readonly depotId?: string | undefined
  readonly customerMobile?: string | undefined
  /** Inclusive bounds on the parsed `info.createdAt` (epoch ms). */
  readonly createdFromMs?: number | undefined
  readonly createdToMs?: number | undefined
  /** Inclusive bounds on the parsed updatedAt (epoch ms). */
  readonly updatedFromMs?: number | undefined
  readonly updatedToMs?: number | undefined
  readonly appOrderId?: string | undefined
  readonly includeDeleted?: boolean | undefined
}

export interface BillQuery extends PageOptions {
  /** "1" import, "2" export. */
  readonly type?: string | undefined
  readonly depotId?: string | undefined
  readonly customerId?: string | undefined
  /** Inclusive bounds on the business date, `yyyy-mm-dd`. */
  readonly fromDate?: string | undefined
  readonly toDate?: string | undefined
  readonly includeDeleted?: boolean | undefined
}

export interface CustomerQuery extends PageOptions {
  /** Case-insensitive (ASCII) substring of name, code, mobile or email. */
  readonly search?: string | undefined
  readonly mobile?: string | undefined
  /** Tombstones too (customers a complete full pass no longer found). */
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
