/**
 * Tenants and their sync state, in SQLite (`tenants.sqlite`).
 *
 * An application (appId) has verify tokens for its webhooks; a business (businessId) granted
 * it access with an access token, permissions, depots and an expiry. Tokens are sealed
 * (AES-256-GCM) before they touch the file and are only opened into `Redacted` values.
 * Per tenant and resource the store keeps the sync state: the cursor of a running full sync
 * (so a crash resumes it), the bound of the last incremental window, and whether the resource
 * is paused (ERR_403, ERR_INVALID_DEPOT_ID) with the reason.
 *
 * The file is opened through `@ocs/sqlite` (owner-only, WAL, synchronous FULL) with the
 * migrations of `drizzle/` (schema: ./TenantTables.ts; rows: ./TenantRows.ts). Timestamps
 * come from the fiber's `Clock`, so `TestClock` drives them.
 */
import { SqliteDatabase } from "@ocs/sqlite"
import type Database from "better-sqlite3"
import { Clock, Context, Effect, Layer, Option, Result, Schema, type Scope } from "effect"
import * as NodeUrl from "node:url"
import type { Sealer } from "./Secrets.ts"
import type { TenantSettings } from "@ocs/sync"
import {
  type App,
  type AppRow,
  type BusinessInput,
  type BusinessRow,
  type BusinessStatus,
  type RecentError,
  type RecentErrorRow,
  type ResourceState,
  rowReader,
  type StateRow,
  toRecentError,
  toState
} from "./TenantRows.ts"

export type { App, Business, BusinessInput, BusinessStatus, RecentError, ResourceState } from "./TenantRows.ts"

export class TenantStoreError extends Schema.TaggedError<TenantStoreError>()("TenantStoreError", {
  message: Schema.String
}) {}

/** The drizzle-kit migrations folder of tenant store files (run at open). */
export const migrationsFolder = NodeUrl.fileURLToPath(new URL("../../drizzle", import.meta.url))

const RECENT_ERRORS_KEPT = 1000

export class TenantStore extends Context.Service<TenantStore, ReturnType<typeof makeApi>>()("@ocs/sync-server/TenantStore") {
  static readonly layer = (options: { readonly filename: string; readonly sealer: Sealer }): Layer.Layer<TenantStore, TenantStoreError> =>
    Layer.effect(TenantStore, make(options))
}

/** Opens (creating and migrating) the file; closed with the scope. */
export const make = (options: { readonly filename: string; readonly sealer: Sealer }): Effect.Effect<TenantStore["Service"], TenantStoreError, Scope.Scope> =>
  SqliteDatabase.make({ filename: options.filename, migrationsFolder }).pipe(
    Effect.flatMap((handle) => handle.use("prepare", () => makeApi(handle, options.sealer))),
    Effect.mapError((e) => new TenantStoreError({ message: `cannot open tenant store ${options.filename}: ${e.message}` }))
  )

const messageOf = (e: unknown) => e instanceof Error ? e.message : String(e)

/** Prepares every statement once (they run per call; webhooks look applications up per delivery). */
const makeApi = (handle: SqliteDatabase.Handle, sealer: Sealer) => {
  const db = handle.client
  const read = rowReader(sealer)
  const tryDb = <A>(what: string, f: () => A): Effect.Effect<A, TenantStoreError> =>
    handle.use(what, f).pipe(Effect.mapError((e) => new TenantStoreError({ message: `tenant store: ${what}: ${messageOf(e.cause)}` })))
  /** `tryDb` with the current time (ms) of the fiber's clock. */
  const tryDbAt = <A>(what: string, f: (now: number) => A): Effect.Effect<A, TenantStoreError> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => tryDb(what, () => f(now)))

  const s = {
    ensureState: db.prepare<[string, string, string]>("INSERT OR IGNORE INTO resource_state (app_id, business_id, resource) VALUES (?, ?, ?)"),
    selectApp: db.prepare<[string], AppRow>("SELECT app_id, verify_tokens, enabled FROM apps WHERE app_id = ?"),
    upsertApp: db.prepare<[string, string, number, number]>(
      "INSERT INTO apps (app_id, verify_tokens, enabled, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(app_id) DO UPDATE SET verify_tokens = excluded.verify_tokens, enabled = excluded.enabled"
    ),
    listApps: db.prepare<[], { app_id: string; enabled: number }>("SELECT app_id, enabled FROM apps ORDER BY app_id"),
    removeApp: db.prepare<[string]>("DELETE FROM apps WHERE app_id = ?"),
    upsertBusiness: db.prepare<[string, string, string, string, string, string, number | null, number | null, number]>(
      `INSERT INTO businesses (app_id, business_id, access_token, version, permissions, depots, granted_at, expires_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(app_id, business_id) DO UPDATE SET access_token = excluded.access_token, version = excluded.version,
         permissions = excluded.permissions, depots = excluded.depots, granted_at = excluded.granted_at, expires_at = excluded.expires_at,
         status = CASE WHEN businesses.status = 'paused' THEN 'paused' ELSE 'active' END,
         attention_code = NULL, attention_message = NULL, attention_at = NULL`
    ),
    liftPauses: db.prepare<[string, string]>(
      "UPDATE resource_state SET paused_code = NULL, paused_message = NULL, paused_at = NULL WHERE app_id = ? AND business_id = ?"
    ),
    business: db.prepare<[string, string], BusinessRow>("SELECT * FROM businesses WHERE app_id = ? AND business_id = ?"),
    businesses: db.prepare<[{ appId: string | null; status: string | null }], BusinessRow>(
      "SELECT * FROM businesses WHERE (@appId IS NULL OR app_id = @appId) AND (@status IS NULL OR status = @status) ORDER BY app_id, business_id"
    ),
    setStatus: db.prepare<[string, string | null, string | null, number | null, string, string]>(
      "UPDATE businesses SET status = ?, attention_code = ?, attention_message = ?, attention_at = ? WHERE app_id = ? AND business_id = ?"
    ),
    removeStates: db.prepare<[string, string]>("DELETE FROM resource_state WHERE app_id = ? AND business_id = ?"),
    removeBusiness: db.prepare<[string, string]>("DELETE FROM businesses WHERE app_id = ? AND business_id = ?"),
    touchWebhook: db.prepare<[number, string, string]>(
      "UPDATE businesses SET last_webhook_at = max(coalesce(last_webhook_at, 0), ?) WHERE app_id = ? AND business_id = ?"
    ),
    setSettings: db.prepare<[string, string, string]>("UPDATE businesses SET settings = ? WHERE app_id = ? AND business_id = ?"),
    state: db.prepare<[string, string, string], StateRow>("SELECT * FROM resource_state WHERE app_id = ? AND business_id = ? AND resource = ?"),
    states: db.prepare<[{ appId: string | null; businessId: string | null }], StateRow>(
      "SELECT * FROM resource_state WHERE (@appId IS NULL OR app_id = @appId) AND (@businessId IS NULL OR business_id = @businessId) ORDER BY app_id, business_id, resource"
    ),
    pauseResource: db.prepare<[string | null, string | null, number | null, string, string, string]>(
      "UPDATE resource_state SET paused_code = ?, paused_message = ?, paused_at = ? WHERE app_id = ? AND business_id = ? AND resource = ?"
    ),
    recordError: db.prepare<[number, string, string | null, string | null, string, string]>(
      "INSERT INTO recent_errors (at, app_id, business_id, resource, tag, message) VALUES (?, ?, ?, ?, ?, ?)"
    ),
    trimErrors: db.prepare<[number]>("DELETE FROM recent_errors WHERE id <= (SELECT max(id) FROM recent_errors) - ?"),
    recentErrors: db.prepare<[{ appId: string | null; limit: number }], RecentErrorRow>(
      "SELECT at, app_id, business_id, resource, tag, message FROM recent_errors WHERE (@appId IS NULL OR app_id = @appId) ORDER BY id DESC LIMIT @limit"
    ),
    noticeOnce: db.prepare<[string, string, string, number]>("INSERT OR IGNORE INTO notices (app_id, business_id, kind, at) VALUES (?, ?, ?, ?)"),
    clearNotices: db.prepare<[string, string, string]>("DELETE FROM notices WHERE app_id = ? AND business_id = ? AND kind LIKE ?")
  }

  // A state patch sets a few of the columns below: one statement per set of columns, prepared
  // the first time that set is used (a handful exist: what the sync engine writes together).
  const patchColumns = {
    cursor: "cursor",
    fullStartedAt: "full_started_at",
    fullCompletedAt: "full_completed_at",
    windowEnd: "window_end",
    incrementalBound: "incremental_bound",
    lastRunAt: "last_run_at",
    lastError: "last_error"
  } as const
  const patchStatements = new Map<string, Database.Statement<Array<unknown>>>()
  const patchStatement = (sets: ReadonlyArray<string>) => {
    const sql = `UPDATE resource_state SET ${sets.join(", ")} WHERE app_id = ? AND business_id = ? AND resource = ?`
    let statement = patchStatements.get(sql)
    if (statement === undefined) {
      statement = db.prepare<Array<unknown>>(sql)
      patchStatements.set(sql, statement)
    }
    return statement
  }

  const readApp = (appId: string): Option.Option<App> => {
    const r = s.selectApp.get(appId)
    return r === undefined ? Option.none() : Option.some(read.app(r))
  }

  // Every webhook delivery looks its application up: reading the row and opening the sealed
  // tokens each time cost about 28 µs. Applications found are kept, opened, until the file
  // changes: `PRAGMA data_version` moves when another connection (another server process, an
  // admin tool) commits, and this connection's own writes to `apps` drop their entry. Misses
  // are not kept, so requests for made-up appIds cannot grow the cache. It answers without an
  // effect (so not through `use`): a webhook delivery costs no fiber for it.
  const dataVersion = db.prepare<[], number>("PRAGMA data_version").pluck()
  const appCache = new Map<string, App>()
  let cachedVersion = -1
  const appCached = (appId: string): Result.Result<Option.Option<App>, TenantStoreError> => {
    try {
      const version = dataVersion.get()!
      if (version !== cachedVersion) {
        appCache.clear()
        cachedVersion = version
      }
      const hit = appCache.get(appId)
      if (hit !== undefined) return Result.succeed(Option.some(hit))
      const found = readApp(appId)
      if (Option.isSome(found)) appCache.set(appId, found.value)
      return Result.succeed(found)
    } catch (e) {
      return Result.fail(new TenantStoreError({ message: `tenant store: read app: ${messageOf(e)}` }))
    }
  }

  // The projection asks, per record, whether its business is registered (records of others are
  // quarantined): an in-memory set, so the answer costs no query. It is kept in step with this
  // connection's own writes, and reloaded when another connection commits to the file (the same
  // `data_version` signal as the application cache).
  const listKeys = db.prepare<[], { app_id: string; business_id: string }>("SELECT app_id, business_id FROM businesses")
  const registered = new Set<string>()
  let registeredVersion = -1
  const keyOf = (appId: string, businessId: string) => `${appId}:${businessId}`
  const isRegistered = (appId: string, businessId: string): boolean => {
    const version = dataVersion.get()!
    if (version !== registeredVersion) {
      registered.clear()
      for (const r of listKeys.all()) registered.add(keyOf(r.app_id, r.business_id))
      registeredVersion = version
    }
    return registered.has(keyOf(appId, businessId))
  }

  return {
    /**
     * Whether the business is registered, from memory (synchronous: the projection asks it per
     * record). Throws if the file cannot be read, which fails the projection's batch (retried).
     */
    isRegistered,
    upsertApp: (appId: string, verifyTokens: ReadonlyArray<string>, enabled = true) =>
      tryDbAt("upsert app", (now) => {
        appCache.delete(appId)
        s.upsertApp.run(appId, sealer.seal(JSON.stringify(verifyTokens)), enabled ? 1 : 0, now)
      }),
    /** Read from the file each time. */
    app: (appId: string) => tryDb("read app", () => readApp(appId)),
    /** The same answer without an effect, from the cache of opened applications (webhook deliveries). */
    appCached,
    apps: () => tryDb("list apps", () => s.listApps.all().map((r) => ({ appId: r.app_id, enabled: r.enabled === 1 }))),
    removeApp: (appId: string) =>
      tryDb("remove app", () => {
        appCache.delete(appId)
        // Its businesses go with it (ON DELETE CASCADE): the set reloads at the next question.
        registeredVersion = -1
        return s.removeApp.run(appId).changes > 0
      }),

    upsertBusiness: (input: BusinessInput) =>
      tryDbAt("upsert business", (now) => {
        s.upsertBusiness.run(
          input.appId,
          input.businessId,
          sealer.seal(input.accessToken),
          input.version ?? "3.0",
          JSON.stringify(input.permissions ?? []),
          JSON.stringify(input.depots ?? []),
          input.grantedAt ?? null,
          input.expiresAt ?? null,
          now
        )
        // A new grant (new token, permissions or depots) lifts resource pauses.
        s.liftPauses.run(input.appId, input.businessId)
        registered.add(keyOf(input.appId, input.businessId))
      }),
    business: (appId: string, businessId: string) =>
      tryDb("read business", () => Option.map(Option.fromUndefinedOr(s.business.get(appId, businessId)), read.business)),
    businesses: (filter?: { readonly appId?: string | undefined; readonly status?: BusinessStatus | undefined }) =>
      tryDb("list businesses", () => s.businesses.all({ appId: filter?.appId ?? null, status: filter?.status ?? null }).map(read.business)),
    setStatus: (appId: string, businessId: string, status: BusinessStatus, attention?: { readonly code: string; readonly message: string }) =>
      tryDbAt("set status", (now) =>
        s.setStatus.run(status, attention?.code ?? null, attention?.message ?? null, attention === undefined ? null : now, appId, businessId).changes > 0),
    removeBusiness: (appId: string, businessId: string) =>
      tryDb("remove business", () => {
        s.removeStates.run(appId, businessId)
        registered.delete(keyOf(appId, businessId))
        return s.removeBusiness.run(appId, businessId).changes > 0
      }),
    touchWebhook: (appId: string, businessId: string, at: number) =>
      tryDb("touch webhook", () => void s.touchWebhook.run(at, appId, businessId)),
    /** Replaces a tenant's sync settings (validated by the caller, @ocs/sync TenantSettings); false if no such tenant. */
    setSettings: (appId: string, businessId: string, settings: TenantSettings.TenantSettings) =>
      tryDb("set settings", () => s.setSettings.run(JSON.stringify(settings), appId, businessId).changes > 0),

    state: (appId: string, businessId: string, resource: string) =>
      tryDb("read sync state", () => {
        s.ensureState.run(appId, businessId, resource)
        return toState(s.state.get(appId, businessId, resource)!)
      }),
    states: (appId?: string, businessId?: string) =>
      tryDb("list sync state", () => s.states.all({ appId: appId ?? null, businessId: businessId ?? null }).map(toState)),
    /** Patches a resource's sync state (only the given fields). */
    updateState: (
      appId: string,
      businessId: string,
      resource: string,
      patch: Partial<Omit<ResourceState, "appId" | "businessId" | "resource" | "paused">> & { readonly addPages?: number; readonly addRecords?: number }
    ) =>
      tryDb("update sync state", () => {
        s.ensureState.run(appId, businessId, resource)
        const sets: Array<string> = []
        const values: Array<unknown> = []
        for (const [field, column] of Object.entries(patchColumns)) {
          const value = patch[field as keyof typeof patchColumns]
          if (value !== undefined) {
            sets.push(`${column} = ?`)
            values.push(value)
          }
        }
        if (patch.addPages !== undefined) {
          sets.push("pages = pages + ?")
          values.push(Math.trunc(patch.addPages))
        }
        if (patch.addRecords !== undefined) {
          sets.push("records = records + ?")
          values.push(Math.trunc(patch.addRecords))
        }
        if (sets.length === 0) return
        patchStatement(sets).run(...values, appId, businessId, resource)
      }),
    pauseResource: (appId: string, businessId: string, resource: string, reason: { readonly code: string; readonly message: string } | null) =>
      tryDbAt("pause resource", (now) => {
        s.ensureState.run(appId, businessId, resource)
        s.pauseResource.run(reason?.code ?? null, reason?.message ?? null, reason === null ? null : now, appId, businessId, resource)
      }),

    recordError: (error: Omit<RecentError, "at">) =>
      tryDbAt("record error", (now) => {
        s.recordError.run(now, error.appId, error.businessId, error.resource, error.tag, error.message)
        s.trimErrors.run(RECENT_ERRORS_KEPT)
      }),
    recentErrors: (limit = 100, appId?: string) =>
      tryDb("recent errors", () => s.recentErrors.all({ appId: appId ?? null, limit }).map(toRecentError)),
    /** Records a notice once; returns false if it was already recorded. */
    noticeOnce: (appId: string, businessId: string, kind: string) =>
      tryDbAt("notice", (now) => s.noticeOnce.run(appId, businessId, kind, now).changes > 0),
    clearNotices: (appId: string, businessId: string, prefix: string) =>
      tryDb("clear notices", () => void s.clearNotices.run(appId, businessId, `${prefix}%`))
  }
}
