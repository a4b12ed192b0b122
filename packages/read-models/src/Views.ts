/**
 * What the read API returns. Rows are the drizzle rows of src/Tables.ts with `record` parsed
 * back losslessly (`Json.parse`: integers beyond 2^53 are bigints) and flags as booleans.
 */
import type { Ids, Json } from "@ocs/protocol"
import type { PageOptions } from "@ocs/protocol/ReadQueries"
import type * as Tables from "./Tables.ts"

/** Every query names its tenant. `businessId: ""` addresses application-level rows. */
export type Tenant = Ids.TenantRef

/** `"1001:42"` to `{ appId: "1001", businessId: "42" }`. */
export const tenantOf = (key: `${string}:${string}`): Tenant => {
  const i = key.indexOf(":")
  return { appId: key.slice(0, i), businessId: key.slice(i + 1) }
}

export type { BillQuery, Counts, CustomerQuery, InventoryQuery, OrderQuery, Page, PageOptions, PaymentQuery, ProductQuery } from "@ocs/protocol/ReadQueries"

type Parsed<Row, K extends keyof Row> = Omit<Row, K> & { readonly [P in K]: Json.JsonValue }

export type Product = Omit<Parsed<typeof Tables.products.$inferSelect, "record">, "deleted"> & { readonly deleted: boolean }
export type Order = Omit<Parsed<typeof Tables.orders.$inferSelect, "record">, "deleted"> & { readonly deleted: boolean }
/** One line of an order, in the version the order row holds. */
export type OrderItem = Parsed<typeof Tables.orderItems.$inferSelect, "record">
/** An order with its lines, in line order. */
export type OrderDetail = Order & { readonly items: ReadonlyArray<OrderItem> }
export type Bill = Omit<Parsed<typeof Tables.bills.$inferSelect, "record">, "deleted"> & { readonly deleted: boolean }
export type BillItem = Parsed<typeof Tables.billItems.$inferSelect, "record">
export type BillDetail = Bill & { readonly items: ReadonlyArray<BillItem> }
export type Customer = Omit<Parsed<typeof Tables.customers.$inferSelect, "record">, "deleted"> & { readonly deleted: boolean }
export type Depot = Omit<Parsed<typeof Tables.depots.$inferSelect, "record">, "deleted"> & { readonly deleted: boolean }
export type Category = Omit<Parsed<typeof Tables.categories.$inferSelect, "record">, "deleted"> & { readonly deleted: boolean }
export type Brand = Omit<Parsed<typeof Tables.brands.$inferSelect, "record">, "deleted"> & { readonly deleted: boolean }
export type StockLevel = Omit<Parsed<typeof Tables.inventory.$inferSelect, "record">, "deleted"> & { readonly deleted: boolean }
export type Payment = Parsed<typeof Tables.payments.$inferSelect, "record">
export type Document = Parsed<typeof Tables.documents.$inferSelect, "body">
export type WebhooksEnabled = Parsed<typeof Tables.webhooksEnabled.$inferSelect, "registeredEvents">
export type UnknownEvent = typeof Tables.unknownEvents.$inferSelect

/** The page service (docs/api-catalogue.md §9): pages, users, tags, conversations, messages, page customers. */
export type PagePage = Parsed<typeof Tables.vpagePages.$inferSelect, "record">
export type PageUser = Parsed<typeof Tables.vpageUsers.$inferSelect, "record">
export type PageTag = Parsed<typeof Tables.vpageTags.$inferSelect, "record">
export type PageConversation = Omit<Parsed<typeof Tables.vpageConversations.$inferSelect, "record">, "hasPhone" | "hasReply"> & {
  readonly hasPhone: boolean | null
  readonly hasReply: boolean | null
}
export type PageMessage = Parsed<typeof Tables.vpageMessages.$inferSelect, "record">
export type PageCustomer = Parsed<typeof Tables.vpageCustomers.$inferSelect, "record" | "phones" | "emails">
export interface PageConversationQuery extends PageOptions {
  readonly pageId?: string | undefined
  /** 1 unread, 2 read. */
  readonly status?: string | undefined
}
export interface PageCustomerQuery extends PageOptions {
  readonly pageId?: string | undefined
}

/** A record held back by the projection's tenant predicate (see `ReadModels.FollowOptions`). */
export interface QuarantinedRecord {
  readonly appId: string
  readonly businessId: string
  readonly offset: number
  readonly type: string
  readonly receivedAt: number
}

/** Quarantined records of one business. */
export interface QuarantinedTenant {
  readonly appId: string
  readonly businessId: string
  readonly records: number
  readonly firstOffset: number
  readonly lastOffset: number
  readonly lastReceivedAt: number
}

export interface QuarantineQuery {
  /** Only this application's businesses. */
  readonly appId?: string | undefined
  /** Latest records returned (the counts cover all). Default 100, at most 1000. */
  readonly limit?: number | undefined
}

export interface Quarantine {
  /** Every business with quarantined records, by appId then businessId. */
  readonly tenants: ReadonlyArray<QuarantinedTenant>
  /** The latest quarantined records (highest offsets first). */
  readonly latest: ReadonlyArray<QuarantinedRecord>
}

/** A command of the write path (docs/architecture.md §4.30), as its transitions left it. */
export interface Command {
  readonly id: string
  readonly kind: string
  readonly state: "pending" | "sending" | "inDoubt" | "confirmed" | "failed" | "cancelled"
  readonly idempotencyKey: string
  readonly requestedBy: { readonly type: "admin" | "console" | "plugin"; readonly name?: string }
  readonly payload: Json.JsonValue
  readonly fingerprint: string
  readonly marker: string | undefined
  readonly attempts: number
  readonly entityId: string | undefined
  /** The exact body of the last answer. */
  readonly lastAnswer: string | undefined
  readonly reason: { readonly tag: string; readonly code?: string; readonly message: string } | undefined
  readonly evidence: string | undefined
  readonly requestedAt: number
  readonly updatedAt: number
}

/** Which id map (docs/architecture.md §4.31): products by appProductId, orders by appOrderId. */
export type IdMapEntity = "product" | "order"

/** One entry of an id map: the service's id and the application's key (appProductId, appOrderId). */
export interface IdMapping {
  readonly id: string
  readonly key: string
  /** The entity is a tombstone in the copy. */
  readonly deleted: boolean
}

/** `keys` or `ids` (at most 1000 each) look entries up, unpaged; without them, a page by id. */
export interface IdMapQuery extends PageOptions {
  readonly keys?: ReadonlyArray<string> | undefined
  readonly ids?: ReadonlyArray<string> | undefined
}

export interface CommandQuery extends PageOptions {
  readonly state?: string | undefined
  readonly kind?: string | undefined
  readonly idempotencyKey?: string | undefined
}
