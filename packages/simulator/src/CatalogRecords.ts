/**
 * The records of one business as the simulator keeps them (facts only; Views.ts writes them
 * in the documented v3 shapes). Apart from Catalog.ts, which holds them, and Seeds.ts, which
 * generates them, so that neither imports the other back.
 */
export interface CatalogOptions {
  readonly seed: number
  readonly products: number
  readonly orders: number
  readonly bills: number
  readonly customers: number
  readonly depots: ReadonlyArray<number>
  /** Ids above 2^53 (written as JSON integer literals, never strings). */
  readonly bigIds: boolean
  /** Share of seeded products that are "already deleted" (gaps in the id sequence). */
  readonly deletedRatio: number
  /** Seeded times lie before this instant (ms): orders and bills over `historyDays`. */
  readonly epochMs: number
  /** How far back seeded orders and bills reach (days): past 31 and 62 days, so windows matter. */
  readonly historyDays: number
  /** Conversations of each page-service page (PageService.ts; default 60). */
  readonly conversationsPerPage?: number | undefined
}

export interface Product {
  readonly id: bigint
  readonly appProductId: string
  readonly code: string
  readonly barcode: string
  readonly name: string
  /** `prices.retail`. */
  readonly price: number
  readonly categoryId: number
  readonly brandId: number
  /** Product status (1 active). */
  readonly status: number
  readonly createdAtMs: number
  readonly updatedAtMs: number
}

/** Stock of one product in one depot; `available` is `remain - holding`. */
export interface StockLevel {
  readonly productId: bigint
  readonly depotId: number
  readonly remain: number
  readonly holding: number
  readonly updatedAtMs: number
}

export interface OrderLine {
  readonly productId: bigint
  readonly code: string
  readonly name: string
  readonly quantity: number
  readonly price: number
  /** Per unit. */
  readonly discount: number
}

export interface Order {
  readonly id: bigint
  readonly appOrderId: string
  readonly type: number
  readonly status: number
  readonly saleChannel: number
  readonly depotId: number
  readonly customerId: bigint
  readonly customerName: string
  readonly customerMobile: string
  readonly lines: ReadonlyArray<OrderLine>
  readonly carrierId: number
  readonly shipFee: number
  /** Paid ahead by bank transfer; the rest is cash on delivery. */
  readonly transfer: number
  readonly createdAtMs: number
  readonly updatedAtMs: number
  /** Set by order/add and order/edit (empty on seeded orders). */
  readonly description?: string | undefined
  readonly privateDescription?: string | undefined
  readonly customerAddress?: string | undefined
  /** order/add with a depot: its lines hold stock there until it succeeds or is cancelled. */
  readonly holdsStock?: boolean | undefined
}

export interface BillLine {
  readonly productId: bigint
  readonly code: string
  readonly barcode: string
  readonly name: string
  readonly quantity: number
  readonly price: number
  readonly discount: number
}

export interface Bill {
  readonly id: bigint
  readonly orderId: bigint | undefined
  readonly depotId: number
  /** §5.2: 1 import, 2 export. */
  readonly type: number
  /** §5.2: 1 delivery (order), 2 retail, 5 supplier, 6 wholesale, ... */
  readonly mode: number
  readonly customerId: bigint | undefined
  readonly customerName: string
  readonly customerMobile: string
  readonly lines: ReadonlyArray<BillLine>
  readonly createdAtMs: number
  /** Set by the bill and stock-movement writes (empty on seeded bills). */
  readonly description?: string | undefined
  readonly supplierId?: number | undefined
}

export interface Customer {
  readonly id: bigint
  /** 1 retail, 2 wholesale, 3 agent. */
  readonly type: number
  readonly code: string
  readonly name: string
  readonly mobile: string
  readonly email: string
  readonly gender: number
  readonly address: string
  readonly points: number
  readonly totalAmount: number
  readonly updatedAtMs: number
}

export interface Category {
  readonly id: bigint
  readonly parentId: number
  readonly code: string
  readonly name: string
  readonly order: number
  readonly status: number
}

export interface Brand {
  readonly id: bigint
  readonly code: string
  readonly name: string
  readonly status: number
  readonly createdAtMs: number
}
