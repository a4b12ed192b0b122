/**
 * The tenant store's file (`tenants.sqlite`), opened once and shared by the three stores over
 * it: the registry (./TenantRegistry.ts), the sync state (./SqliteSyncState.ts) and the notices
 * (./SqliteNotices.ts). Opened through `@ocs/sqlite` (owner-only, WAL, synchronous FULL) with
 * the migrations of `drizzle/` (schema: ./internal/tenantTables.ts). Timestamps come from the fiber's
 * `Clock`, so `TestClock` drives them.
 */
import { SqliteDatabase } from "@ocs/sqlite"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import * as NodeUrl from "node:url"

export class TenantStoreError extends Schema.TaggedError<TenantStoreError>()("TenantStoreError", {
  message: Schema.String
}) {}

/** The drizzle-kit migrations folder of tenant store files (run at open). */
export const migrationsFolder = NodeUrl.fileURLToPath(new URL("../drizzle", import.meta.url))

const messageOf = (e: unknown) => e instanceof Error ? e.message : String(e)

export class TenantDatabase extends Context.Service<TenantDatabase, {
  readonly client: SqliteDatabase.Handle["client"]
  /** Runs a statement group; a failure names `what`. */
  readonly run: <A>(what: string, f: () => A) => Effect.Effect<A, TenantStoreError>
  /** `run` with the current time (ms) of the fiber's clock. */
  readonly runAt: <A>(what: string, f: (now: number) => A) => Effect.Effect<A, TenantStoreError>
}>()("@ocs/tenant-store/TenantDatabase") {
  /** Opens (creating and migrating) the file; closed with the layer's scope. */
  static readonly layer = (options: { readonly filename: string }): Layer.Layer<TenantDatabase, TenantStoreError> =>
    Layer.effect(
      TenantDatabase,
      SqliteDatabase.make({ filename: options.filename, migrationsFolder }).pipe(
        Effect.mapError((e) => new TenantStoreError({ message: `cannot open tenant store ${options.filename}: ${e.message}` })),
        Effect.map((handle) => {
          const run = <A>(what: string, f: () => A): Effect.Effect<A, TenantStoreError> =>
            handle.use(what, f).pipe(Effect.mapError((e) => new TenantStoreError({ message: `tenant store: ${what}: ${messageOf(e.cause)}` })))
          return TenantDatabase.of({
            client: handle.client,
            run,
            runAt: (what, f) => Effect.flatMap(Clock.currentTimeMillis, (now) => run(what, () => f(now)))
          })
        })
      )
    )
}
