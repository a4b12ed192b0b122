/**
 * ReadApi: the read side of a read-model file, apart from the projection that writes it
 * (docs/architecture.md §3). Every query names its tenant; pages are keyset by id. A reader
 * (admin routes, plugins, the console) depends on this, not on the writer: `ReadModels`
 * includes it over its own connection, and `ReadApi.layer` opens a file for reads alone.
 */
import { SqliteDatabase } from "@ocs/sqlite"
import { Context, Effect, Layer, Option, type Scope } from "effect"
import * as Digest from "./internal/digest.ts"
import * as Projection from "./internal/projection.ts"
import * as Queries from "./internal/queries.ts"
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
  readonly depots: (tenant: V.Tenant) => Effect.Effect<ReadonlyArray<V.Depot>, SqliteError>
  readonly categories: (tenant: V.Tenant) => Effect.Effect<ReadonlyArray<V.Category>, SqliteError>
  readonly brands: (tenant: V.Tenant) => Effect.Effect<ReadonlyArray<V.Brand>, SqliteError>
  readonly payments: (tenant: V.Tenant, options?: V.PaymentQuery) => Effect.Effect<V.Page<V.Payment>, SqliteError>
  readonly documents: (tenant: V.Tenant, kind: string, options?: V.PageOptions) => Effect.Effect<V.Page<V.Document>, SqliteError>
  readonly document: (tenant: V.Tenant, kind: string, id: string) => Effect.Effect<Option.Option<V.Document>, SqliteError>
  /** The application's last webhooksEnabled (application-level: only `tenant.appId` is used). */
  readonly webhooks: (tenant: V.Tenant) => Effect.Effect<Option.Option<V.WebhooksEnabled>, SqliteError>
  readonly unknownEvents: (tenant: V.Tenant, options?: V.PageOptions) => Effect.Effect<V.Page<V.UnknownEvent>, SqliteError>
  readonly counts: (tenant: V.Tenant) => Effect.Effect<V.Counts, SqliteError>
  /** Rows per resource over every tenant (tombstones included): tenant-free, for metrics. */
  readonly rowCounts: Effect.Effect<Readonly<Record<string, number>>, SqliteError>
  /** Deterministic content digest of one tenant, or of everything with `"all"` (default). */
  readonly digest: (tenant?: V.Tenant | "all") => Effect.Effect<Digest.Digest, SqliteError>
}

/** The read API over an open file (its own statements; the writer's are not touched). */
export const make = (handle: SqliteDatabase.Handle): ReadApi => {
  const q = Queries.make(handle.drizzle)
  const query = <A>(name: string, f: () => A) => handle.use(name, f)
  return {
    products: (tenant, o) => query("products", () => q.products(tenant, o)),
    product: (tenant, id) => query("product", () => Option.fromUndefinedOr(q.product(tenant, id))),
    inventory: (tenant, o) => query("inventory", () => q.inventory(tenant, o)),
    orders: (tenant, o) => query("orders", () => q.orders(tenant, o)),
    order: (tenant, id) => query("order", () => Option.fromUndefinedOr(q.order(tenant, id))),
    bills: (tenant, o) => query("bills", () => q.bills(tenant, o)),
    bill: (tenant, id) => query("bill", () => Option.fromUndefinedOr(q.bill(tenant, id))),
    customers: (tenant, o) => query("customers", () => q.customers(tenant, o)),
    customer: (tenant, id) => query("customer", () => Option.fromUndefinedOr(q.customer(tenant, id))),
    depots: (tenant) => query("depots", () => q.depots(tenant)),
    categories: (tenant) => query("categories", () => q.categories(tenant)),
    brands: (tenant) => query("brands", () => q.brands(tenant)),
    payments: (tenant, o) => query("payments", () => q.payments(tenant, o)),
    documents: (tenant, kind, o) => query("documents", () => q.documents(tenant, kind, o)),
    document: (tenant, kind, id) => query("document", () => Option.fromUndefinedOr(q.document(tenant, kind, id))),
    webhooks: (tenant) => query("webhooks", () => Option.fromUndefinedOr(q.webhooks(tenant))),
    unknownEvents: (tenant, o) => query("unknownEvents", () => q.unknownEvents(tenant, o)),
    counts: (tenant) => query("counts", () => q.counts(tenant)),
    rowCounts: query("rowCounts", () => q.rowCounts()),
    digest: (tenant = "all") => query("digest", () => Digest.compute(handle.client, tenant === "all" ? undefined : tenant))
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
