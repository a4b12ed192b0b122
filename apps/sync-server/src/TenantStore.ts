/**
 * Tenants and their sync state, in SQLite.
 *
 * An application (appId) has verify tokens for its webhooks; a business (businessId) granted
 * it access with an access token, permissions, depots and an expiry. Tokens are sealed
 * (AES-256-GCM) before they touch the file and are only opened into `Redacted` values.
 * Per tenant and resource the store keeps the sync state: the cursor of a running full sync
 * (so a crash resumes it), the bound of the last incremental window, and whether the resource
 * is paused (ERR_403, ERR_INVALID_DEPOT_ID) with the reason.
 */
import Database from "better-sqlite3"
import { Context, Effect, Layer, Option, Redacted, Result, Schema } from "effect"
import type { Sealer } from "./Secrets.ts"

export class TenantStoreError extends Schema.TaggedError<TenantStoreError>()("TenantStoreError", {
  message: Schema.String
}) {}

export type BusinessStatus = "active" | "paused" | "attention"

export interface App {
  readonly appId: string
  readonly verifyTokens: ReadonlyArray<Redacted.Redacted<string>>
  readonly enabled: boolean
}

export interface Business {
  readonly appId: string
  readonly businessId: string
  readonly accessToken: Redacted.Redacted<string>
  readonly version: string
  readonly permissions: ReadonlyArray<string>
  readonly depots: ReadonlyArray<string>
  readonly grantedAt: number | null
  readonly expiresAt: number | null
  readonly status: BusinessStatus
  /** Why a person is needed (errorCode and message), when status is "attention". */
  readonly attention: { readonly code: string; readonly message: string; readonly at: number } | null
  readonly lastWebhookAt: number | null
}

export interface ResourceState {
  readonly appId: string
  readonly businessId: string
  readonly resource: string
  readonly paused: { readonly code: string; readonly message: string; readonly at: number } | null
  /** Cursor text of a running full sync; null when none is running. */
  readonly cursor: string | null
  readonly fullStartedAt: number | null
  readonly fullCompletedAt: number | null
  /** Upper bound (ms) of the last incremental window that completed. */
  readonly incrementalBound: number | null
  readonly lastRunAt: number | null
  readonly pages: number
  readonly records: number
  readonly lastError: string | null
}

export interface RecentError {
  readonly at: number
  readonly appId: string
  readonly businessId: string | null
  readonly resource: string | null
  readonly tag: string
  readonly message: string
}

export interface BusinessInput {
  readonly appId: string
  readonly businessId: string
  readonly accessToken: string
  readonly version?: string | undefined
  readonly permissions?: ReadonlyArray<string> | undefined
  readonly depots?: ReadonlyArray<string> | undefined
  readonly grantedAt?: number | null | undefined
  readonly expiresAt?: number | null | undefined
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS apps (
  app_id TEXT PRIMARY KEY,
  verify_tokens TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS businesses (
  app_id TEXT NOT NULL REFERENCES apps(app_id) ON DELETE CASCADE,
  business_id TEXT NOT NULL,
  access_token TEXT NOT NULL,
  version TEXT NOT NULL DEFAULT '3.0',
  permissions TEXT NOT NULL DEFAULT '[]',
  depots TEXT NOT NULL DEFAULT '[]',
  granted_at INTEGER,
  expires_at INTEGER,
  status TEXT NOT NULL DEFAULT 'active',
  attention_code TEXT,
  attention_message TEXT,
  attention_at INTEGER,
  last_webhook_at INTEGER,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (app_id, business_id)
);
CREATE TABLE IF NOT EXISTS resource_state (
  app_id TEXT NOT NULL,
  business_id TEXT NOT NULL,
  resource TEXT NOT NULL,
  paused_code TEXT,
  paused_message TEXT,
  paused_at INTEGER,
  cursor TEXT,
  full_started_at INTEGER,
  full_completed_at INTEGER,
  incremental_bound INTEGER,
  last_run_at INTEGER,
  pages INTEGER NOT NULL DEFAULT 0,
  records INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  PRIMARY KEY (app_id, business_id, resource)
);
CREATE TABLE IF NOT EXISTS recent_errors (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  app_id TEXT NOT NULL,
  business_id TEXT,
  resource TEXT,
  tag TEXT NOT NULL,
  message TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS notices (
  app_id TEXT NOT NULL,
  business_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (app_id, business_id, kind)
);
`

const RECENT_ERRORS_KEPT = 1000

export class TenantStore extends Context.Service<TenantStore, ReturnType<typeof makeApi>>()("@ocs/sync-server/TenantStore") {
  static readonly layer = (options: { readonly filename: string; readonly sealer: Sealer }): Layer.Layer<TenantStore, TenantStoreError> =>
    Layer.effect(
      TenantStore,
      Effect.acquireRelease(
        Effect.try({
          try: () => {
            const db = new Database(options.filename)
            db.pragma("journal_mode = WAL")
            db.pragma("synchronous = FULL")
            db.pragma("foreign_keys = ON")
            db.pragma("busy_timeout = 5000")
            db.exec(SCHEMA)
            return db
          },
          catch: (e) => new TenantStoreError({ message: `cannot open tenant store ${options.filename}: ${String(e)}` })
        }),
        (db) => Effect.sync(() => db.close())
      ).pipe(Effect.map((db) => makeApi(db, options.sealer)))
    )
}

interface BusinessRow {
  app_id: string
  business_id: string
  access_token: string
  version: string
  permissions: string
  depots: string
  granted_at: number | null
  expires_at: number | null
  status: BusinessStatus
  attention_code: string | null
  attention_message: string | null
  attention_at: number | null
  last_webhook_at: number | null
}

interface StateRow {
  app_id: string
  business_id: string
  resource: string
  paused_code: string | null
  paused_message: string | null
  paused_at: number | null
  cursor: string | null
  full_started_at: number | null
  full_completed_at: number | null
  incremental_bound: number | null
  last_run_at: number | null
  pages: number
  records: number
  last_error: string | null
}

const makeApi = (db: Database.Database, sealer: Sealer) => {
  const tryDb = <A>(what: string, f: () => A) =>
    Effect.try({ try: f, catch: (e) => new TenantStoreError({ message: `tenant store: ${what}: ${e instanceof Error ? e.message : String(e)}` }) })

  const openSecret = (sealed: string, what: string) => {
    const r = sealer.open(sealed)
    if (Result.isFailure(r)) throw new Error(`${what}: ${r.failure.message}`)
    return r.success
  }

  const toBusiness = (r: BusinessRow): Business => ({
    appId: r.app_id,
    businessId: r.business_id,
    accessToken: openSecret(r.access_token, `access token of ${r.app_id}:${r.business_id}`),
    version: r.version,
    permissions: JSON.parse(r.permissions) as Array<string>,
    depots: JSON.parse(r.depots) as Array<string>,
    grantedAt: r.granted_at,
    expiresAt: r.expires_at,
    status: r.status,
    attention: r.attention_code === null ? null : { code: r.attention_code, message: r.attention_message ?? "", at: r.attention_at ?? 0 },
    lastWebhookAt: r.last_webhook_at
  })

  const toState = (r: StateRow): ResourceState => ({
    appId: r.app_id,
    businessId: r.business_id,
    resource: r.resource,
    paused: r.paused_code === null ? null : { code: r.paused_code, message: r.paused_message ?? "", at: r.paused_at ?? 0 },
    cursor: r.cursor,
    fullStartedAt: r.full_started_at,
    fullCompletedAt: r.full_completed_at,
    incrementalBound: r.incremental_bound,
    lastRunAt: r.last_run_at,
    pages: r.pages,
    records: r.records,
    lastError: r.last_error
  })

  const ensureState = db.prepare("INSERT OR IGNORE INTO resource_state (app_id, business_id, resource) VALUES (?, ?, ?)")

  const selectApp = db.prepare<[string], { app_id: string; verify_tokens: string; enabled: number }>(
    "SELECT app_id, verify_tokens, enabled FROM apps WHERE app_id = ?"
  )
  const readApp = (appId: string): Option.Option<App> => {
    const r = selectApp.get(appId)
    if (r === undefined) return Option.none()
    const tokens = JSON.parse(Redacted.value(openSecret(r.verify_tokens, `verify tokens of ${appId}`))) as Array<string>
    return Option.some({ appId: r.app_id, verifyTokens: tokens.map((t) => Redacted.make(t)), enabled: r.enabled === 1 })
  }

  // Every webhook delivery looks its application up: reading the row and opening the sealed
  // tokens each time cost about 28 µs. Applications found are kept, opened, until the file
  // changes: `PRAGMA data_version` moves when another connection (another server process, an
  // admin tool) commits, and this connection's own writes to `apps` drop their entry. Misses
  // are not kept, so requests for made-up appIds cannot grow the cache.
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
      return Result.fail(new TenantStoreError({ message: `tenant store: read app: ${e instanceof Error ? e.message : String(e)}` }))
    }
  }

  return {
    upsertApp: (appId: string, verifyTokens: ReadonlyArray<string>, enabled = true) =>
      tryDb("upsert app", () => {
        appCache.delete(appId)
        db
          .prepare(
            "INSERT INTO apps (app_id, verify_tokens, enabled, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(app_id) DO UPDATE SET verify_tokens = excluded.verify_tokens, enabled = excluded.enabled"
          )
          .run(appId, sealer.seal(JSON.stringify(verifyTokens)), enabled ? 1 : 0, Date.now())
      }),
    /** Read from the file each time. */
    app: (appId: string) => tryDb("read app", () => readApp(appId)),
    /** The same answer without an effect, from the cache of opened applications (webhook deliveries). */
    appCached,
    apps: () => tryDb("list apps", () => (db.prepare("SELECT app_id, enabled FROM apps ORDER BY app_id").all() as Array<{ app_id: string; enabled: number }>).map((r) => ({ appId: r.app_id, enabled: r.enabled === 1 }))),
    removeApp: (appId: string) =>
      tryDb("remove app", () => {
        appCache.delete(appId)
        return db.prepare("DELETE FROM apps WHERE app_id = ?").run(appId).changes > 0
      }),

    upsertBusiness: (input: BusinessInput) =>
      tryDb("upsert business", () => {
        db.prepare(
          `INSERT INTO businesses (app_id, business_id, access_token, version, permissions, depots, granted_at, expires_at, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(app_id, business_id) DO UPDATE SET access_token = excluded.access_token, version = excluded.version,
             permissions = excluded.permissions, depots = excluded.depots, granted_at = excluded.granted_at, expires_at = excluded.expires_at,
             status = CASE WHEN businesses.status = 'paused' THEN 'paused' ELSE 'active' END,
             attention_code = NULL, attention_message = NULL, attention_at = NULL`
        ).run(
          input.appId,
          input.businessId,
          sealer.seal(input.accessToken),
          input.version ?? "3.0",
          JSON.stringify(input.permissions ?? []),
          JSON.stringify(input.depots ?? []),
          input.grantedAt ?? null,
          input.expiresAt ?? null,
          Date.now()
        )
        // A new grant (new token, permissions or depots) lifts resource pauses.
        db.prepare("UPDATE resource_state SET paused_code = NULL, paused_message = NULL, paused_at = NULL WHERE app_id = ? AND business_id = ?").run(
          input.appId,
          input.businessId
        )
      }),
    business: (appId: string, businessId: string) =>
      tryDb("read business", () => {
        const r = db.prepare("SELECT * FROM businesses WHERE app_id = ? AND business_id = ?").get(appId, businessId) as BusinessRow | undefined
        return r === undefined ? Option.none<Business>() : Option.some(toBusiness(r))
      }),
    businesses: (filter?: { readonly appId?: string | undefined; readonly status?: BusinessStatus | undefined }) =>
      tryDb("list businesses", () => {
        const rows = db.prepare(
          "SELECT * FROM businesses WHERE (@appId IS NULL OR app_id = @appId) AND (@status IS NULL OR status = @status) ORDER BY app_id, business_id"
        ).all({ appId: filter?.appId ?? null, status: filter?.status ?? null }) as Array<BusinessRow>
        return rows.map(toBusiness)
      }),
    setStatus: (appId: string, businessId: string, status: BusinessStatus, attention?: { readonly code: string; readonly message: string }) =>
      tryDb("set status", () =>
        db.prepare(
          "UPDATE businesses SET status = ?, attention_code = ?, attention_message = ?, attention_at = ? WHERE app_id = ? AND business_id = ?"
        ).run(status, attention?.code ?? null, attention?.message ?? null, attention === undefined ? null : Date.now(), appId, businessId).changes > 0),
    removeBusiness: (appId: string, businessId: string) =>
      tryDb("remove business", () => {
        db.prepare("DELETE FROM resource_state WHERE app_id = ? AND business_id = ?").run(appId, businessId)
        return db.prepare("DELETE FROM businesses WHERE app_id = ? AND business_id = ?").run(appId, businessId).changes > 0
      }),
    touchWebhook: (appId: string, businessId: string, at: number) =>
      tryDb("touch webhook", () => void db.prepare("UPDATE businesses SET last_webhook_at = max(coalesce(last_webhook_at, 0), ?) WHERE app_id = ? AND business_id = ?").run(at, appId, businessId)),

    state: (appId: string, businessId: string, resource: string) =>
      tryDb("read sync state", () => {
        ensureState.run(appId, businessId, resource)
        return toState(db.prepare("SELECT * FROM resource_state WHERE app_id = ? AND business_id = ? AND resource = ?").get(appId, businessId, resource) as StateRow)
      }),
    states: (appId?: string, businessId?: string) =>
      tryDb("list sync state", () =>
        (db.prepare(
          "SELECT * FROM resource_state WHERE (@appId IS NULL OR app_id = @appId) AND (@businessId IS NULL OR business_id = @businessId) ORDER BY app_id, business_id, resource"
        ).all({ appId: appId ?? null, businessId: businessId ?? null }) as Array<StateRow>).map(toState)),
    /** Patches a resource's sync state (only the given fields). */
    updateState: (appId: string, businessId: string, resource: string, patch: Partial<Omit<ResourceState, "appId" | "businessId" | "resource" | "paused">> & { readonly addPages?: number; readonly addRecords?: number }) =>
      tryDb("update sync state", () => {
        ensureState.run(appId, businessId, resource)
        const cols: Array<string> = []
        const vals: Array<unknown> = []
        const set = (col: string, v: unknown) => {
          cols.push(`${col} = ?`)
          vals.push(v)
        }
        if (patch.cursor !== undefined) set("cursor", patch.cursor)
        if (patch.fullStartedAt !== undefined) set("full_started_at", patch.fullStartedAt)
        if (patch.fullCompletedAt !== undefined) set("full_completed_at", patch.fullCompletedAt)
        if (patch.incrementalBound !== undefined) set("incremental_bound", patch.incrementalBound)
        if (patch.lastRunAt !== undefined) set("last_run_at", patch.lastRunAt)
        if (patch.lastError !== undefined) set("last_error", patch.lastError)
        if (patch.addPages !== undefined) cols.push(`pages = pages + ${Math.trunc(patch.addPages)}`)
        if (patch.addRecords !== undefined) cols.push(`records = records + ${Math.trunc(patch.addRecords)}`)
        if (cols.length === 0) return
        db.prepare(`UPDATE resource_state SET ${cols.join(", ")} WHERE app_id = ? AND business_id = ? AND resource = ?`).run(...vals, appId, businessId, resource)
      }),
    pauseResource: (appId: string, businessId: string, resource: string, reason: { readonly code: string; readonly message: string } | null) =>
      tryDb("pause resource", () => {
        ensureState.run(appId, businessId, resource)
        db.prepare("UPDATE resource_state SET paused_code = ?, paused_message = ?, paused_at = ? WHERE app_id = ? AND business_id = ? AND resource = ?").run(
          reason?.code ?? null,
          reason?.message ?? null,
          reason === null ? null : Date.now(),
          appId,
          businessId,
          resource
        )
      }),

    recordError: (error: Omit<RecentError, "at">) =>
      tryDb("record error", () => {
        db.prepare("INSERT INTO recent_errors (at, app_id, business_id, resource, tag, message) VALUES (?, ?, ?, ?, ?, ?)").run(
          Date.now(),
          error.appId,
          error.businessId,
          error.resource,
          error.tag,
          error.message
        )
        db.prepare("DELETE FROM recent_errors WHERE id <= (SELECT max(id) FROM recent_errors) - ?").run(RECENT_ERRORS_KEPT)
      }),
    recentErrors: (limit = 100, appId?: string) =>
      tryDb("recent errors", () =>
        (db.prepare("SELECT at, app_id, business_id, resource, tag, message FROM recent_errors WHERE (@appId IS NULL OR app_id = @appId) ORDER BY id DESC LIMIT @limit").all({
          appId: appId ?? null,
          limit
        }) as Array<{ at: number; app_id: string; business_id: string | null; resource: string | null; tag: string; message: string }>).map(
          (r): RecentError => ({ at: r.at, appId: r.app_id, businessId: r.business_id, resource: r.resource, tag: r.tag, message: r.message })
        )),
    /** Records a notice once; returns false if it was already recorded. */
    noticeOnce: (appId: string, businessId: string, kind: string) =>
      tryDb("notice", () => db.prepare("INSERT OR IGNORE INTO notices (app_id, business_id, kind, at) VALUES (?, ?, ?, ?)").run(appId, businessId, kind, Date.now()).changes > 0),
    clearNotices: (appId: string, businessId: string, prefix: string) =>
      tryDb("clear notices", () => void db.prepare("DELETE FROM notices WHERE app_id = ? AND business_id = ? AND kind LIKE ?").run(appId, businessId, `${prefix}%`))
  }
}
