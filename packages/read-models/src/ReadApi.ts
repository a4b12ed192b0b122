/**
 * ReadApi: the read side of a read-model file, apart from the projection that writes it
 * (docs/architecture.md §3). Every query names its tenant; pages are keyset by id. A reader
 * (admin routes, plugins, the console) depends on this, not on the writer: `ReadModels`
 * includes it over its own connection, and `ReadApi.layer` opens a file for reads alone.
 */
import { SqliteDatabase } from "@ocs/sqlite"
import { Context, Effect, Layer, Option, type Scope } from "effect"
import * as Digest from "./internal/digest.ts"
import * as IdMaps from "./internal/idMaps.ts"
import * as Projection from "./internal/projection.ts"
import * as Projections from "./projections/index.ts"
import type { SqliteError } from "./ReadModelsError.ts"
import type * as V from "./Views.ts"

export type { Digest } from "./internal/digest.ts"

export interface ReadApi {
  readonly products: (tenant: V.Tenant, options?: V.ProductQuery) => Effect.Effect<V.Page<V.Product>, SqliteError>
  readonly product: (tenant: V.Tenant, id: string) => Effect.Effect<Option.Option<V.Product>, SqliteError>
  /** Stock levels per product and depot, ordered by product then depot. */
  readonly inventory: (tenant: V.Tenant, options?: V.InventoryQuery) => Effect.Effect<ReadonlyArray<V.StockLevel>, SqliteError>
  readonly orders: (tenant: V.Tenant, options?: V.OrderQuery) => Effect.Effect<V.Page<V.Order>, SqliteError>
  /** The order (tombstones included) with its lines. */
  readonly order: (tenant: V.Tenant, id: string) => Effect.Effect<Option.Option<V.OrderDetail>, SqliteError>
  readonly bills: (tenant: V.Tenant, options?: V.BillQuery) => Effect.Effect<V.Page<V.Bill>, SqliteError>
  /** The bill (tombstones included) with its lines. */
  readonly bill: (tenant: V.Tenant, id: string) => Effect.Effect<Option.Option<V.BillDetail>, SqliteError>
  readonly customers: (tenant: V.Tenant, options?: V.CustomerQuery) => Effect.Effect<V.Page<V.Customer>, SqliteError>
  readonly customer: (tenant: V.Tenant, id: string) => Effect.Effect<Option.Option<V.Customer>, SqliteError>
  /** Commands of the write path, newest first, filtered by state, kind or idempotency key. */
  readonly commands: (tenant: V.Tenant, options?: V.CommandQuery) => Effect.Effect<V.Page<V.Command>, SqliteError>
  readonly command: (tenant: V.Tenant, id: string) => Effect.Effect<Option.Option<V.Command>, SqliteError>
  /** The id map of products (appProductId) or orders (appOrderId), from the copy: by keys, by ids, or paged by id. */
  readonly idMap: (tenant: V.Tenant, entity: V.IdMapEntity, query?: V.IdMapQuery) => Effect.Effect<V.Page<V.IdMapping>, SqliteError>
  readonly depots: (tenant: V.Tenant) => Effect.Effect<ReadonlyArray<V.Depot>, SqliteError>
  readonly categories: (tenant: V.Tenant) => Effect.Effect<ReadonlyArray<V.Category>, SqliteError>
  readonly brands: (tenant: V.Tenant) => Effect.Effect<ReadonlyArray<V.Brand>, SqliteError>
  readonly payments: (tenant: V.Tenant, options?: V.PaymentQuery) => Effect.Effect<V.Page<V.Payment>, SqliteError>
  readonly documents: (tenant: V.Tenant, kind: string, options?: V.PageOptions) => Effect.Effect<V.Page<V.Document>, SqliteError>
  readonly document: (tenant: V.Tenant, kind: string, id: string) => Effect.Effect<Option.Option<V.Document>, SqliteError>
  /** The page service (docs/api-catalogue.md §9): the tenant's pages, users and tags. */
  readonly vpagePages: (tenant: V.Tenant) => Effect.Effect<ReadonlyArray<V.PagePage>, SqliteError>
  readonly vpageUsers: (tenant: V.Tenant) => Effect.Effect<ReadonlyArray<V.PageUser>, SqliteError>
  readonly vpageTags: (tenant: V.Tenant) => Effect.Effect<ReadonlyArray<V.PageTag>, SqliteError>
  /** Conversations, latest interaction first, with their last message and status. */
  readonly vpageConversations: (tenant: V.Tenant, options?: V.PageConversationQuery) => Effect.Effect<V.Page<V.PageConversation>, SqliteError>
  readonly vpageConversation: (tenant: V.Tenant, id: string) => Effect.Effect<Option.Option<V.PageConversation>, SqliteError>
  /** A conversation's messages in the order they were written. */
  readonly vpageMessages: (tenant: V.Tenant, conversationId: string, options?: V.PageOptions) => Effect.Effect<V.Page<V.PageMessage>, SqliteError>
  readonly vpageCustomers: (tenant: V.Tenant, options?: V.PageCustomerQuery) => Effect.Effect<V.Page<V.PageCustomer>, SqliteError>
  /** The application's last webhooksEnabled (application-level: only `tenant.appId` is used). */
  readonly webhooks: (tenant: V.Tenant) => Effect.Effect<Option.Option<V.WebhooksEnabled>, SqliteError>
  readonly unknownEvents: (tenant: V.Tenant, options?: V.PageOptions) => Effect.Effect<V.Page<V.UnknownEvent>, SqliteError>
  readonly counts: (tenant: V.Tenant) => Effect.Effect<V.Counts, SqliteError>
  /** Rows per resource over every tenant (tombstones included): tenant-free, for metrics. */
  readonly rowCounts: Effect.Effect<Readonly<Record<string, number>>, SqliteError>
  /** Deterministic content digest of one tenant, or of everything with `"all"` (default). */
  readonly digest: (tenant?: V.Tenant | "all") => Effect.Effect<Digest.Digest, SqliteError>
}

/** Rows per tenant and in all for each counted table (prepared once per connection). */
export const counter = (client: SqliteDatabase.Handle["client"]) => {
  const prepared = Projections.counted.map((c) => {
    const of = (where: string) => client.prepare<[string, string], number>(`SELECT count(*) FROM ${c.table} WHERE ${where}`).pluck()
    return {
      spec: c,
      live: of(`app_id = ? AND business_id = ?${c.tombstones ? " AND deleted = 0" : ""}`),
      deletedRows: c.deleted === undefined ? undefined : of("app_id = ? AND business_id = ? AND deleted = 1"),
      all: client.prepare<[], number>(`SELECT count(*) FROM ${c.table}`).pluck()
    }
  })
  return {
    counts: (tenant: V.Tenant): V.Counts => {
      const out: Record<string, number> = {}
      for (const c of prepared) {
        out[c.spec.live] = c.live.get(tenant.appId, tenant.businessId) ?? 0
        if (c.spec.deleted !== undefined) out[c.spec.deleted] = c.deletedRows!.get(tenant.appId, tenant.businessId) ?? 0
      }
      return out as unknown as V.Counts
    },
    /** Keyed by table name (tombstones included), for `/metrics`. */
    rowCounts: (): Readonly<Record<string, number>> => Object.fromEntries(prepared.map((c) => [c.spec.table, c.all.get() ?? 0]))
  }
}

/** Runs a query as one named read of the store. */
export type Many = <A extends ReadonlyArray<unknown>, R>(name: string, f: (...args: A) => R) => (...args: A) => Effect.Effect<R, SqliteError>
/** The same, for a query that may find nothing. */
export type One = <A extends ReadonlyArray<unknown>, R>(name: string, f: (...args: A) => R | undefined) => (...args: A) => Effect.Effect<Option.Option<R>, SqliteError>

/**
 * The reads every store answers with the registry's own queries, however it runs them (the SQLite
 * file here, the PostgreSQL copy in `postgres/ReadApi.ts`): one list, so the stores cannot drift.
 */
export const reads = (
  q: ReturnType<typeof Projections.queries>,
  idMap: ReturnType<typeof IdMaps.make>,
  many: Many,
  one: One
): Omit<ReadApi, "counts" | "rowCounts" | "digest"> => ({
  products: many("products", q.products),
  product: one("product", q.product),
  inventory: many("inventory", q.inventory),
  orders: many("orders", q.orders),
  order: one("order", q.order),
  bills: many("bills", q.bills),
  bill: one("bill", q.bill),
  customers: many("customers", q.customers),
  customer: one("customer", q.customer),
  commands: many("commands", q.commands),
  command: one("command", q.command),
  idMap: many("idMap", idMap),
  depots: many("depots", q.depots),
  categories: many("categories", q.categories),
  brands: many("brands", q.brands),
  payments: many("payments", q.payments),
  documents: many("documents", q.documents),
  document: one("document", q.document),
  vpagePages: many("vpagePages", q.vpagePages),
  vpageUsers: many("vpageUsers", q.vpageUsers),
  vpageTags: many("vpageTags", q.vpageTags),
  vpageConversations: many("vpageConversations", q.vpageConversations),
  vpageConversation: one("vpageConversation", q.vpageConversation),
  vpageMessages: many("vpageMessages", q.vpageMessages),
  vpageCustomers: many("vpageCustomers", q.vpageCustomers),
  webhooks: one("webhooks", q.webhooks),
  unknownEvents: many("unknownEvents", q.unknownEvents)
})

/** The read API over an open file: every projection's queries (the registry's), on this connection. */
export const make = (handle: SqliteDatabase.Handle): ReadApi => {
  const q = Projections.queries(handle.drizzle)
  const n = counter(handle.client)
  const idMap = IdMaps.make(handle.client)
  const many = <A extends ReadonlyArray<unknown>, R>(name: string, f: (...args: A) => R) => (...args: A) => handle.use(name, () => f(...args))
  const one = <A extends ReadonlyArray<unknown>, R>(name: string, f: (...args: A) => R | undefined) => (...args: A) =>
    handle.use(name, () => Option.fromUndefinedOr(f(...args)))
  return {
    ...reads(q, idMap, many, one),
    counts: many("counts", n.counts),
    rowCounts: handle.use("rowCounts", n.rowCounts),
    digest: (tenant = "all") => handle.use("digest", () => Digest.compute(handle.client, tenant === "all" ? undefined : tenant))
  }
}

export interface Options {
  readonly filename: string
  readonly busyTimeoutMillis?: number | undefined
  /** SQLite page cache of the connection in KiB. Default 16384 (16 MiB). */
  readonly cacheSizeKiB?: number | undefined
}

/** Opens a read-model file (migrating it, as the writer would) for reads, in the current scope. */
export const open = (options: Options): Effect.Effect<ReadApi, SqliteError, Scope.Scope> =>
  Effect.map(Projection.open({ ...options, cacheSizeKiB: options.cacheSizeKiB ?? 16_384 }), make)

export class ReadApiService extends Context.Service<ReadApiService, ReadApi>()("@ocs/read-models/ReadApi") {
  static readonly layer = (options: Options): Layer.Layer<ReadApiService, SqliteError> => Layer.effect(ReadApiService, open(options))
}
