/**
 * Operations as values.
 *
 * docs/api-catalogue.md, Requests: every call is POST `{base_url}/v3.0/<resource>/<operation>?appId=&businessId=`
 * with headers `Authorization: <token>` and `Content-Type: application/json` and a raw JSON
 * body; `{base_url}` is the POS or the page service (Vpage) base.
 *
 * An operation carries everything the rest of the engine needs to call it, page through it,
 * budget it and store what it returns. The API reference shows product/list and product/add; every
 * other operation (orders, payments, invoices, ...) is declared as data with `declare`, so a
 * new resource syncs without new code.
 */
import { Schema } from "effect"
import * as Catalogue from "./Catalogue.ts"
import * as Ids from "./Ids.ts"
import * as Json from "./Json.ts"
import * as Paginator from "./Paginator.ts"
import * as Records from "./Records.ts"

/** docs/api-catalogue.md, Requests 2: two service families, each with its own base address. */
export const Family = Schema.Literals(["pos", "vpage"])
export type Family = typeof Family.Type

/** docs/api-catalogue.md, Limits: 150 requests per 30 seconds per appId + businessId + URL, unless stated. */
export const RateLimit = Schema.Struct({
  requests: Schema.Int.check(Schema.isGreaterThan(0)),
  windowSeconds: Schema.Finite.check(Schema.isGreaterThan(0))
})
export type RateLimit = typeof RateLimit.Type

export const DEFAULT_RATE_LIMIT: RateLimit = { requests: 150, windowSeconds: 30 }

/** What a list operation returns, for storage: the kind of record and where its id is. */
export const Entity = Schema.Struct({
  /** e.g. "product", "order", "payment", "invoice". */
  kind: Schema.String,
  /** Field of a record that holds its id, a dotted path where records nest (`info.id`). */
  idField: Schema.String,
  /** Field holding the record's last change time, if the operation has one. */
  updatedAtField: Schema.optional(Schema.String),
  /** Field holding the record's creation time, if the operation has one. */
  createdAtField: Schema.optional(Schema.String)
})
export type Entity = typeof Entity.Type

/** Filters that select records changed in a time range (docs/api-catalogue.md, Limits 5). */
export const Incremental = Schema.Struct({
  from: Schema.String,
  to: Schema.String,
  /** How the service writes the bounds: ISO 8601 text, Unix seconds, or `yyyy-mm-dd`. */
  format: Schema.Literals(["iso", "unix", "date"]),
  /** The longest range one query may span (order/list: 31 days), if limited. */
  maxDays: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0)))
})
export type Incremental = typeof Incremental.Type

/**
 * A range every query of the operation is confined to (docs/api-catalogue.md: order/list and
 * bill/list answer only 31 days at a time, the last 31 days when no range is sent). A full
 * read walks back window by window to a horizon.
 */
export const Window = Schema.Struct({
  from: Schema.String,
  to: Schema.String,
  format: Schema.Literals(["unix", "date"]),
  maxDays: Schema.Int.check(Schema.isGreaterThan(0))
})
export type Window = typeof Window.Type

/**
 * An operation as plain data: how a configuration file (or a plugin) declares an operation
 * the catalogue does not list.
 */
export const OperationSpec = Schema.Struct({
  family: Family,
  resource: Schema.String.check(Schema.isPattern(/^[A-Za-z][\w-]*$/)),
  operation: Schema.String.check(Schema.isPattern(/^[A-Za-z][\w-]*$/)),
  kind: Schema.Literals(["list", "command"]),
  pageSizeMax: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
  rateLimit: Schema.optional(RateLimit),
  entity: Schema.optional(Entity),
  incremental: Schema.optional(Incremental),
  window: Schema.optional(Window),
  /** Permission (data page) the token needs, when known; informational. */
  permission: Schema.optional(Schema.String),
  /**
   * Filters sent with every request of this operation, e.g. `{ "depotId": 3 }` for a list
   * that must name its depot. Two declarations of one operation with different fixed filters
   * are two resources (see `resourceKey`).
   */
  filters: Schema.optional(Schema.Record(Schema.String, Schema.Unknown))
})
export type OperationSpec = typeof OperationSpec.Type

/** An operation; `Item` is the decoded type of one record (lists) or of the data (commands). */
export interface Operation<Item = unknown> {
  readonly family: Family
  readonly resource: string
  readonly operation: string
  readonly kind: "list" | "command"
  /** `/v3.0/<resource>/<operation>` */
  readonly path: string
  /** docs/api-catalogue.md, Paginator: at most 100 by default; an operation may allow more. */
  readonly pageSizeMax: number
  /** docs/api-catalogue.md, Limits: "Per-operation rate limit: stated with the operation where it differs". */
  readonly rateLimit: RateLimit
  readonly entity: Entity | undefined
  readonly incremental: Incremental | undefined
  readonly window: Window | undefined
  /** Filters sent with every request (e.g. a depot). */
  readonly filters: Readonly<Record<string, unknown>> | undefined
  /** Decodes one record of a list's `data` array, or the whole `data` of a command. */
  readonly item: Schema.Decoder<Item>
  /**
   * A list with no time filter that sorts by its change time: incremental reads ask newest
   * first and stop once past their bound (the page service, docs/api-catalogue.md §9).
   */
  readonly newestFirst?: NewestFirst | undefined
  /** Each record has a list of its own, read right after the record's page (a conversation's messages). */
  readonly each?: Each | undefined
}

/** How a list without time filters is read incrementally: sorted newest first by `sort`, bound read from `field`. */
export interface NewestFirst {
  /** The paginator's sort field (`updatedTime`), sent `DESC`. */
  readonly sort: string
  /** The record's field holding that time. */
  readonly field: string
  /** How the field writes it: unix seconds or milliseconds. */
  readonly unit: "s" | "ms"
}

/** A list every record of which has its own (`of` the record's `idField` value). */
export interface Each {
  readonly idField: string
  readonly of: (id: string) => Operation<unknown>
}

/**
 * The service's own time zone (UTC+7). Date filters (`yyyy-mm-dd`) name its calendar days
 * (docs/api-catalogue.md: inferred from public clients, which build them at UTC+7).
 */
export const SERVICE_UTC_OFFSET_MS = 7 * 3600 * 1000

const DAY_MS = 24 * 3600 * 1000

/** Writes an instant (ms) as a filter bound: ISO text, unix seconds, or the service's calendar day. */
export const formatBound = (ms: number, format: "iso" | "unix" | "date"): string | number => {
  switch (format) {
    case "iso":
      return new Date(ms).toISOString()
    case "unix":
      return Math.floor(ms / 1000)
    case "date":
      return new Date(ms + SERVICE_UTC_OFFSET_MS).toISOString().slice(0, 10)
  }
}

/**
 * Reads a filter bound back to an instant (ms). A date is its first millisecond (`"start"`) or
 * its last (`"end"`) in the service's time zone. Undefined when the value is not of the format.
 */
export const parseBound = (value: unknown, format: "iso" | "unix" | "date", edge: "start" | "end" = "start"): number | undefined => {
  switch (format) {
    case "unix": {
      const n = typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : typeof value === "string" && /^\d+$/.test(value) ? Number(value) : Number.NaN
      return Number.isFinite(n) ? n * 1000 : undefined
    }
    case "iso": {
      const n = typeof value === "string" ? Date.parse(value) : Number.NaN
      return Number.isFinite(n) ? n : undefined
    }
    case "date": {
      if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined
      const start = Date.parse(`${value}T00:00:00Z`) - SERVICE_UTC_OFFSET_MS
      if (!Number.isFinite(start)) return undefined
      return edge === "start" ? start : start + DAY_MS - 1
    }
  }
}

/** Builds an operation value. */
export const make = <Item = Records.AnyRecord>(
  spec: OperationSpec & { readonly item?: Schema.Decoder<Item>; readonly newestFirst?: NewestFirst | undefined; readonly each?: Each | undefined }
): Operation<Item> => ({
  family: spec.family,
  resource: spec.resource,
  operation: spec.operation,
  kind: spec.kind,
  path: `/v3.0/${spec.resource}/${spec.operation}`,
  pageSizeMax: spec.pageSizeMax ?? Paginator.DEFAULT_PAGE_SIZE_MAX,
  rateLimit: spec.rateLimit ?? DEFAULT_RATE_LIMIT,
  entity: spec.entity,
  incremental: spec.incremental,
  window: spec.window,
  filters: spec.filters,
  item: (spec.item ?? Records.AnyRecord) as Schema.Decoder<Item>,
  ...(spec.newestFirst === undefined ? {} : { newestFirst: spec.newestFirst }),
  ...(spec.each === undefined ? {} : { each: spec.each })
})

const decodeSpec = Schema.decodeUnknownSync(OperationSpec)

/** Declares an operation the catalogue does not list, from plain data (validated). */
export const declare = (spec: unknown): Operation<Records.AnyRecord> => make(decodeSpec(spec))

/** `family:/v3.0/resource/operation`: the operation part of a rate-limit budget key. */
export const key = (op: Pick<Operation, "family" | "path">): string => `${op.family}:${op.path}`

/**
 * What a sync keeps state under: the operation key, plus its fixed filters when it has any
 * (`pos:/v3.0/inventory/list?{"depotId":3}`).
 */
export const resourceKey = (op: Pick<Operation, "family" | "path" | "filters">): string =>
  op.filters === undefined || Object.keys(op.filters).length === 0
    ? key(op)
    : `${key(op)}?${Json.stringify(Object.fromEntries(Object.entries(op.filters).sort(([a], [b]) => (a < b ? -1 : 1))))}`

/**
 * The request URL. docs/api-catalogue.md, Requests: `{base_url}/v3.0/<resource>/<operation>?appId=&businessId=`.
 * `base` is the family's base address without a trailing slash (one is tolerated).
 */
export const url = (base: string, op: Pick<Operation, "path">, tenant: Ids.Tenant): string =>
  `${base.replace(/\/+$/, "")}${op.path}?appId=${encodeURIComponent(tenant.appId)}&businessId=${encodeURIComponent(tenant.businessId)}`

/** docs/api-catalogue.md, Requests 1: the token goes in `Authorization` as is (no scheme). */
export const headers = (accessToken: string): Readonly<Record<string, string>> => ({
  authorization: accessToken,
  "content-type": "application/json"
})

/** Serialises a request body: bigints exact, cursors byte for byte. */
export const body = (value: unknown): string => Json.stringify(value === undefined ? {} : value)

// ---------------------------------------------------------------------------------------------
// The operations the API reference shows.
// ---------------------------------------------------------------------------------------------

/** docs/api-catalogue.md, §2 Products: filters.name; paginator size, sort (field -> asc|desc), next. */
export const ProductListFilters = Schema.StructWithRest(
  Schema.Struct({ name: Schema.optional(Schema.String) }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)
export type ProductListFilters = typeof ProductListFilters.Type

export const ProductListSort = Schema.Record(Schema.String, Paginator.SortDirection)
export type ProductListSort = typeof ProductListSort.Type

export const productList: Operation<Records.Product> = make({
  family: "pos",
  resource: "product",
  operation: "list",
  kind: "list",
  entity: { kind: "product", idField: "id", updatedAtField: "updatedAt", createdAtField: "createdAt" },
  // Stock changes do not move a product's updatedAt (docs/api-catalogue.md §2.1): stock comes
  // from product/inventory and inventoryChange.
  incremental: { from: "updatedAtFrom", to: "updatedAtTo", format: "unix" },
  item: Records.Product
})

/** docs/api-catalogue.md, §2 Products: request is an array of products. Which fields are required: not shown. */
export const ProductAddItem = Schema.Struct({
  appProductId: Schema.optional(Schema.String),
  code: Schema.optional(Schema.String),
  barcode: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  price: Schema.optional(Schema.Finite)
})
export type ProductAddItem = typeof ProductAddItem.Type

export const ProductAddRequest = Schema.Array(ProductAddItem)

/** docs/api-catalogue.md, §2 Products: response `data` is an array of { appProductId, id, barcode }. */
export const ProductAddResult = Schema.Array(
  Schema.StructWithRest(
    Schema.Struct({
      appProductId: Schema.optional(Schema.NullOr(Schema.String)),
      id: Ids.Id,
      barcode: Schema.optional(Schema.NullOr(Schema.String))
    }),
    [Schema.Record(Schema.String, Schema.Unknown)]
  )
)
export type ProductAddResult = typeof ProductAddResult.Type

export const productAdd: Operation<ProductAddResult> = make({
  family: "pos",
  resource: "product",
  operation: "add",
  kind: "command",
  item: ProductAddResult
})

// ---------------------------------------------------------------------------------------------
// The catalogue's read operations (docs/api-catalogue.md), typed where the engine keeps a read
// model of their records. Every other documented read operation is `fromCatalogue`'s to build.
// ---------------------------------------------------------------------------------------------

/**
 * An operation from its catalogue entry: path, page-size maximum, id and time fields, window
 * and incremental filters as documented. `kind` names the read model its records go to.
 */
export const fromCatalogue = <Item = Records.AnyRecord>(
  entry: Catalogue.CatalogueEntry,
  options: {
    readonly kind?: string | undefined
    readonly item?: Schema.Decoder<Item> | undefined
    readonly filters?: Readonly<Record<string, unknown>> | undefined
    readonly newestFirst?: NewestFirst | undefined
    readonly each?: Each | undefined
  } = {}
): Operation<Item> =>
  make<Item>({
    family: entry.family,
    resource: entry.resource,
    operation: entry.operation,
    kind: "list",
    pageSizeMax: entry.pageSizeMax,
    entity: {
      kind: options.kind ?? `${entry.resource}.${entry.operation}`,
      idField: entry.idField ?? "id",
      ...(entry.updatedAtField === undefined ? {} : { updatedAtField: entry.updatedAtField }),
      ...(entry.createdAtField === undefined ? {} : { createdAtField: entry.createdAtField })
    },
    ...(entry.incremental === undefined ? {} : {
      incremental: { ...entry.incremental, ...(entry.window !== undefined && entry.window.format === "unix" ? { maxDays: entry.window.maxDays } : {}) }
    }),
    ...(entry.window === undefined ? {} : { window: entry.window }),
    ...(options.filters === undefined ? {} : { filters: options.filters }),
    ...(options.item === undefined ? {} : { item: options.item }),
    ...(options.newestFirst === undefined ? {} : { newestFirst: options.newestFirst }),
    ...(options.each === undefined ? {} : { each: options.each })
  })

const entry = (resource: string, operation: string): Catalogue.CatalogueEntry => {
  const e = Catalogue.find("pos", resource, operation)
  if (e === undefined) throw new Error(`pos ${resource}/${operation} is not in the catalogue`)
  return e
}

/** Orders, nested (`info`, `channel`, `products`, ...). Full reads walk 31-day createdAt windows. */
export const orderList: Operation<Records.Order> = fromCatalogue(entry("order", "list"), { kind: "order", item: Records.Order })

/** Bills (stock movements and sales): 31-day `fromDate`/`toDate` windows, no updated time. */
export const billList: Operation<Records.Bill> = fromCatalogue(entry("bill", "list"), { kind: "bill", item: Records.Bill })

export const customerList: Operation<Records.Customer> = fromCatalogue(entry("customer", "list"), { kind: "customer", item: Records.Customer })

export const depotList: Operation<Records.Depot> = fromCatalogue(entry("business", "depot"), { kind: "depot", item: Records.Depot })

export const categoryList: Operation<Records.Category> = fromCatalogue(entry("product", "category"), { kind: "category", item: Records.Category })

export const brandList: Operation<Records.Brand> = fromCatalogue(entry("product", "brand"), { kind: "brand", item: Records.Brand })

/** Stock per product and depot. `depotIds` narrows a read to the depots given. */
export const productInventory = (depotIds?: ReadonlyArray<number | string>): Operation<Records.InventoryItem> =>
  fromCatalogue(entry("product", "inventory"), {
    kind: "inventory",
    item: Records.InventoryItem,
    filters: depotIds === undefined ? undefined : { depotIds: depotIds.map((d) => (typeof d === "string" ? Ids.toWire(d) : d)) }
  })

/**
 * The deletion feeds (docs/api-catalogue.md, "Deletion feeds"): each record names a deleted order
 * (bill), when (`createdAt`, unix s) and by whom (`createdById`); read incrementally by deletion
 * time, they give the same deletion event a full pass would, with who and when.
 */
export const orderDeleted: Operation<Records.AnyRecord> = fromCatalogue(entry("order", "deleted"), { kind: "orderDeletion" })
export const billDeleted: Operation<Records.AnyRecord> = fromCatalogue(entry("bill", "deleted"), { kind: "billDeletion" })

/** The deletion feeds, synced when named in `sync.resources` (or a tenant's). */
export const feeds: ReadonlyArray<Operation<any>> = [orderDeleted, billDeleted]

const vpageEntry = (resource: string, operation: string): Catalogue.CatalogueEntry => {
  const e = Catalogue.find("vpage", resource, operation)
  if (e === undefined) throw new Error(`vpage ${resource}/${operation} is not in the catalogue`)
  return e
}

/** The page service's pages (docs/api-catalogue.md §9), kept as documents of kind "page". */
export const pageList: Operation<Records.AnyRecord> = fromCatalogue(vpageEntry("page", "list"), { kind: "page" })

/**
 * One conversation's messages (docs/api-catalogue.md §9): `createdAt` in milliseconds, read
 * newest first down to the bound on incremental passes. Read as part of its page's
 * conversations (`each`), never as a resource of its own.
 */
export const conversationMessages = (conversationId: string): Operation<Records.AnyRecord> =>
  fromCatalogue(vpageEntry("conversation", "messages"), {
    kind: "message",
    filters: { conversationId },
    newestFirst: { sort: "createdAt", field: "createdAt", unit: "ms" }
  })

/**
 * One page's conversations (docs/api-catalogue.md §9): a resource per page (its fixed filter
 * `pageIds`), so that ERR_PAGE_EXPIRED pauses that page alone; each conversation's messages are
 * read with it. No time filter is documented: incremental reads sort by interaction time
 * (`updatedTime`, DESC) and stop past their bound, reading the messages of the conversations
 * changed since.
 */
export const conversationList = (pageId: string): Operation<Records.AnyRecord> =>
  fromCatalogue(vpageEntry("conversation", "list"), {
    kind: "conversation",
    filters: { pageIds: [pageId] },
    newestFirst: { sort: "updatedTime", field: "updatedAt", unit: "s" },
    each: { idField: "id", of: conversationMessages }
  })

/** The page service's staff accounts (`user/list`). */
export const pageUserList: Operation<Records.AnyRecord> = fromCatalogue(vpageEntry("user", "list"), { kind: "pageUser" })

/** The page service's conversation tags (`conversation/tags`). */
export const conversationTags: Operation<Records.AnyRecord> = fromCatalogue(vpageEntry("conversation", "tags"), { kind: "conversationTag" })

/** One page's customers (`customer/list` on the Vpage host, filter `pageId`): a resource per page, like its conversations. */
export const pageCustomerList = (pageId: string): Operation<Records.AnyRecord> =>
  fromCatalogue(vpageEntry("customer", "list"), { kind: "pageCustomer", filters: { pageId } })

/**
 * Every page-service read for the pages given (the grant's `pageIds`, else the tenant's
 * configured pages): pages, users and tags once, then each page's conversations (with their
 * messages) and customers.
 */
export const pageServiceReads = (pageIds: ReadonlyArray<string>): ReadonlyArray<Operation<unknown>> => [
  fromCatalogue(vpageEntry("page", "list"), { kind: "page", filters: { ids: [...pageIds] } }),
  pageUserList,
  conversationTags,
  ...pageIds.flatMap((id) => [conversationList(id), pageCustomerList(id)])
] as ReadonlyArray<Operation<unknown>>

/** The read operations a tenant syncs by default: a typed read model each. */
export const defaultReads: ReadonlyArray<Operation<any>> = [
  productList, orderList, billList, customerList, depotList, productInventory(), categoryList, brandList
]

/** All operations this package types, by `key`. */
export const builtin: ReadonlyArray<Operation<any>> = [productAdd, ...defaultReads, ...feeds]
