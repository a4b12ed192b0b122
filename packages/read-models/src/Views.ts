/**
 * What the read API returns. Rows are the drizzle rows of src/Tables.ts with `record` parsed
 * back losslessly (`Json.parse`: integers beyond 2^53 are bigints) and flags as booleans.
 */
import type { Json } from "@ocs/protocol"
import type * as Tables from "./Tables.ts"

/** Every query names its tenant. `businessId: ""` addresses application-level rows. */
export interface Tenant {
  readonly appId: string
  readonly businessId: string
}

/** `"1001:42"` to `{ appId: "1001", businessId: "42" }`. */
export const tenantOf = (key: `${string}:${string}`): Tenant => {
  const i = key.indexOf(":")
  return { appId: key.slice(0, i), businessId: key.slice(i + 1) }
}

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

type Parsed<Row, K extends keyof Row> = Omit<Row, K> & { readonly [P in K]: Json.JsonValue }

export type Product = Omit<Parsed<typeof Tables.products.$inferSelect, "record">, "deleted"> & { readonly deleted: boolean }
export type Order = Omit<Parsed<typeof Tables.orders.$inferSelect, "record">, "deleted" | "lines"> & {
  readonly deleted: boolean
  readonly lines: ReadonlyArray<Json.JsonValue>
}
export type StockLevel = Parsed<typeof Tables.inventory.$inferSelect, "record">
export type Payment = Parsed<typeof Tables.payments.$inferSelect, "record">
export type Document = Parsed<typeof Tables.documents.$inferSelect, "body">
export type WebhooksEnabled = Parsed<typeof Tables.webhooksEnabled.$inferSelect, "registeredEvents">
export type UnknownEvent = typeof Tables.unknownEvents.$inferSelect
export type SyncState = typeof Tables.syncState.$inferSelect

export interface ProductQuery extends PageOptions {
  /** Case-insensitive (ASCII) substring of name, code, barcode or appProductId. */
  readonly search?: string | undefined
  readonly includeDeleted?: boolean | undefined
}

export interface OrderQuery extends PageOptions {
  readonly status?: string | undefined
  readonly appOrderId?: string | undefined
  readonly customerMobile?: string | undefined
  /** Inclusive bounds on the parsed updatedAt (epoch ms). */
  readonly updatedFromMs?: number | undefined
  readonly updatedToMs?: number | undefined
  readonly includeDeleted?: boolean | undefined
}

export interface PaymentQuery extends PageOptions {
  readonly orderId?: string | undefined
  readonly invoiceId?: string | undefined
}

/** What `setSyncState` changes; fields left undefined keep their stored value. */
export interface SyncStatePatch {
  readonly cursor?: string | null | undefined
  readonly lastFullSyncAt?: number | null | undefined
  readonly lastIncrementalBound?: string | null | undefined
  /** Default "idle" for a new row. */
  readonly status?: string | undefined
  readonly attentionReason?: string | null | undefined
}

export interface Counts {
  readonly products: number
  readonly deletedProducts: number
  readonly inventory: number
  readonly orders: number
  readonly deletedOrders: number
  readonly payments: number
  readonly documents: number
  readonly unknownEvents: number
}
