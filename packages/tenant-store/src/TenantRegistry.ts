/**
 * Tenants and their grants, in the tenant store's file (./TenantDatabase.ts).
 *
 * An application (appId) has verify tokens for its webhooks; a business (businessId) granted
 * it access with an access token, permissions, depots and an expiry, and has a status (active,
 * paused, or on hold for a person: "attention") and its own sync settings. Tokens are sealed
 * (AES-256-GCM) before they touch the file and are only opened into `Redacted` values.
 * `layerSyncTenants` gives the sync engine its view (`@ocs/sync` SyncTenants).
 */
import { Effect, Layer, Option, Result } from "effect"
import { Context } from "effect"
import { Ids } from "@ocs/protocol"
import { SyncTenants, type TenantSettings } from "@ocs/sync"
import * as Connect from "./Connect.ts"
import type { Sealer } from "./Secrets.ts"
import { TenantDatabase, TenantStoreError } from "./TenantDatabase.ts"
import { type App, type AppConnect, type AppRow, type BusinessInput, type BusinessRow, type BusinessStatus, rowReader } from "./internal/tenantRows.ts"

export type { App, AppConnect, Business, BusinessInput, BusinessStatus } from "./internal/tenantRows.ts"

export class TenantRegistry extends Context.Service<TenantRegistry, Effect.Success<ReturnType<typeof make>>>()("@ocs/tenant-store/TenantRegistry") {
  /**
   * `refreshMillis` (default 500): how often the in-memory applications and registered
   * businesses look for another connection's commits to the file (`appCached`, `isRegistered`).
   */
  static readonly layer = (options: { readonly sealer: Sealer; readonly refreshMillis?: number | undefined }): Layer.Layer<TenantRegistry, TenantStoreError, TenantDatabase> =>
    Layer.effect(TenantRegistry, make(options.sealer, options.refreshMillis ?? 500))

  /** The sync engine's view of the registry (whichever registry layer is below it). */
  static readonly layerSyncTenants: Layer.Layer<SyncTenants.SyncTenants, never, TenantRegistry> = Layer.effect(
    SyncTenants.SyncTenants,
    Effect.map(TenantRegistry, (registry) => {
      const unavailable = (e: TenantStoreError) => new SyncTenants.TenantsUnavailable({ message: e.message })
      return SyncTenants.SyncTenants.of({
        tenant: (appId, businessId) => Effect.mapError(registry.business(appId, businessId), unavailable),
        tenants: (filter) => Effect.mapError(registry.businesses(filter), unavailable),
        // A token refused or revoked: the hold's message carries the connect link, when there is one.
        hold: (appId, businessId, attention) =>
          Effect.mapError(
            Effect.gen(function*() {
              const app = yield* registry.app(appId)
              const hint = Option.isSome(app) && app.value.publicUrl !== null && app.value.secretKey !== null &&
                  (attention.code === "ERR_INVALID_ACCESS_TOKEN" || attention.code === "ERR_INVALID_VERSION")
                ? `; connect link: ${Connect.link(app.value.publicUrl, appId)}`
                : ""
              yield* registry.setStatus(appId, businessId, "attention", { ...attention, message: attention.message + hint })
            }),
            unavailable
          )
      })
    })
  )
}

const pause = (millis: number) =>
  Effect.callback<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), millis)
    return Effect.sync(() => clearTimeout(timer))
  })

/** Prepares every statement once (they run per call; webhooks look applications up per delivery). */
const make = (sealer: Sealer, refreshMillis: number) =>
  Effect.flatMap(TenantDatabase, (file) =>
    file.run("prepare", () => {
      const db = file.client
      const read = rowReader(sealer)
      const s = {
        selectApp: db.prepare<[string], AppRow>("SELECT app_id, verify_tokens, enabled, secret_key, public_url FROM apps WHERE app_id = ?"),
        // The grant flow's fields keep their value when an upsert does not name them.
        upsertApp: db.prepare<[string, string, number, number, string | null, string | null]>(
          `INSERT INTO apps (app_id, verify_tokens, enabled, created_at, secret_key, public_url) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT(app_id) DO UPDATE SET verify_tokens = excluded.verify_tokens, enabled = excluded.enabled,
             secret_key = coalesce(excluded.secret_key, apps.secret_key), public_url = coalesce(excluded.public_url, apps.public_url)`
        ),
        listApps: db.prepare<[], { app_id: string; enabled: number; connect: number; public_url: string | null }>(
          "SELECT app_id, enabled, secret_key IS NOT NULL AS connect, public_url FROM apps ORDER BY app_id"
        ),
        removeApp: db.prepare<[string]>("DELETE FROM apps WHERE app_id = ?"),
        upsertBusiness: db.prepare<[string, string, string, string, string, string, string, number | null, number | null, number]>(
          `INSERT INTO businesses (app_id, business_id, access_token, version, permissions, depots, pages, granted_at, expires_at, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(app_id, business_id) DO UPDATE SET access_token = excluded.access_token, version = excluded.version,
             permissions = excluded.permissions, depots = excluded.depots, pages = excluded.pages, granted_at = excluded.granted_at, expires_at = excluded.expires_at,
             status = CASE WHEN businesses.status = 'paused' THEN 'paused' ELSE 'active' END,
             attention_code = NULL, attention_message = NULL, attention_at = NULL`
        ),
        // A new grant (new token, permissions or depots) lifts the pauses of its resources.
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
        // A business removed takes its sync state with it.
        removeStates: db.prepare<[string, string]>("DELETE FROM resource_state WHERE app_id = ? AND business_id = ?"),
        removeBusiness: db.prepare<[string, string]>("DELETE FROM businesses WHERE app_id = ? AND business_id = ?"),
        touchWebhook: db.prepare<[number, string, string]>(
          "UPDATE businesses SET last_webhook_at = max(coalesce(last_webhook_at, 0), ?) WHERE app_id = ? AND business_id = ?"
        ),
        setSettings: db.prepare<[string, string, string]>("UPDATE businesses SET settings = ? WHERE app_id = ? AND business_id = ?"),
        listKeys: db.prepare<[], { app_id: string; business_id: string }>("SELECT app_id, business_id FROM businesses"),
        allApps: db.prepare<[], AppRow>("SELECT app_id, verify_tokens, enabled, secret_key, public_url FROM apps"),
        dataVersion: db.prepare<[], number>("PRAGMA data_version").pluck()
      }

      const readApp = (appId: string): Option.Option<App> => {
        const r = s.selectApp.get(appId)
        return r === undefined ? Option.none() : Option.some(read.app(r))
      }

      // Every webhook delivery looks its application up, and the projection asks per record
      // whether its business is registered: both answer from memory, without an effect and
      // without touching the file (a read on the main thread can wait for a stalled disk,
      // docs/architecture.md §4.30). Every application is kept, opened (reading the row and
      // opening the sealed tokens cost about 28 µs a delivery), with the set of registered
      // businesses; a made-up appId is a miss in the map, so it cannot grow it. This
      // connection's own writes update both at once. Another connection's commits (another server
      // process, an admin tool) move `PRAGMA data_version`, which a fiber reads every
      // `refreshMillis` through the file's handle (so through the disk probe) and reloads both
      // when it moved: such changes show within that interval.
      const appCache = new Map<string, App>()
      const registered = new Set<string>()
      const keyOf = (appId: string, businessId: string) => Ids.tenantKey({ appId, businessId })
      const reloadApps = () => {
        appCache.clear()
        for (const r of s.allApps.all()) appCache.set(r.app_id, read.app(r))
      }
      const reloadRegistered = () => {
        registered.clear()
        for (const r of s.listKeys.all()) registered.add(keyOf(r.app_id, r.business_id))
      }
      let seenVersion = s.dataVersion.get()!
      reloadApps()
      reloadRegistered()
      /** Reloads both when another connection committed since the last look. */
      const refresh = () => {
        const version = s.dataVersion.get()!
        if (version === seenVersion) return false
        reloadApps()
        reloadRegistered()
        seenVersion = version
        return true
      }
      const appCached = (appId: string): Result.Result<Option.Option<App>, TenantStoreError> =>
        Result.succeed(Option.fromUndefinedOr(appCache.get(appId)))
      const isRegistered = (appId: string, businessId: string): boolean => registered.has(keyOf(appId, businessId))

      const registry = {
        /**
         * Whether the business is registered, from memory (synchronous: the projection asks it
         * per record); never touches the file.
         */
        isRegistered,
        /** `connect`: the grant flow's secret key (sealed here) and public URL; absent fields keep theirs. */
        upsertApp: (appId: string, verifyTokens: ReadonlyArray<string>, enabled = true, connect?: AppConnect) =>
          file.runAt("upsert app", (now) => {
            s.upsertApp.run(
              appId,
              sealer.seal(JSON.stringify(verifyTokens)),
              enabled ? 1 : 0,
              now,
              connect?.secretKey === undefined ? null : sealer.seal(connect.secretKey),
              connect?.publicUrl ?? null
            )
            const row = s.selectApp.get(appId)
            if (row !== undefined) appCache.set(appId, read.app(row))
          }),
        /** Read from the file each time. */
        app: (appId: string) => file.run("read app", () => readApp(appId)),
        /** The same answer without an effect and without touching the file, from memory (webhook deliveries). */
        appCached,
        /** Never the secrets: whether the app can connect businesses (it has a secret key) and its public URL. */
        apps: () =>
          file.run("list apps", () =>
            s.listApps.all().map((r) => ({ appId: r.app_id, enabled: r.enabled === 1, connect: r.connect === 1, publicUrl: r.public_url }))),
        removeApp: (appId: string) =>
          file.run("remove app", () => {
            const removed = s.removeApp.run(appId).changes > 0
            appCache.delete(appId)
            // Its businesses go with it (ON DELETE CASCADE).
            reloadRegistered()
            return removed
          }),
        upsertBusiness: (input: BusinessInput) =>
          file.runAt("upsert business", (now) => {
            s.upsertBusiness.run(
              input.appId,
              input.businessId,
              sealer.seal(input.accessToken),
              input.version ?? "3.0",
              JSON.stringify(input.permissions ?? []),
              JSON.stringify(input.depots ?? []),
              JSON.stringify(input.pages ?? []),
              input.grantedAt ?? null,
              input.expiresAt ?? null,
              now
            )
            s.liftPauses.run(input.appId, input.businessId)
            registered.add(keyOf(input.appId, input.businessId))
          }),
        business: (appId: string, businessId: string) =>
          file.run("read business", () => Option.map(Option.fromUndefinedOr(s.business.get(appId, businessId)), read.business)),
        businesses: (filter?: { readonly appId?: string | undefined; readonly status?: BusinessStatus | undefined }) =>
          file.run("list businesses", () => s.businesses.all({ appId: filter?.appId ?? null, status: filter?.status ?? null }).map(read.business)),
        setStatus: (appId: string, businessId: string, status: BusinessStatus, attention?: { readonly code: string; readonly message: string }) =>
          file.runAt("set status", (now) =>
            s.setStatus.run(status, attention?.code ?? null, attention?.message ?? null, attention === undefined ? null : now, appId, businessId).changes > 0),
        removeBusiness: (appId: string, businessId: string) =>
          file.run("remove business", () => {
            s.removeStates.run(appId, businessId)
            registered.delete(keyOf(appId, businessId))
            return s.removeBusiness.run(appId, businessId).changes > 0
          }),
        touchWebhook: (appId: string, businessId: string, at: number) =>
          file.run("touch webhook", () => void s.touchWebhook.run(at, appId, businessId)),
        /** Replaces a tenant's sync settings (validated by the caller, `TenantSettings.validate`); false if no such tenant. */
        setSettings: (appId: string, businessId: string, settings: TenantSettings.TenantSettings) =>
          file.run("set settings", () => s.setSettings.run(JSON.stringify(settings), appId, businessId).changes > 0)
      }
      return { registry, refresh }
    }).pipe(
      Effect.tap(({ refresh }) =>
        // A failed look (a stalled disk, a busy file) keeps what memory has: the next one retries.
        // Paced by a real timer, not the fiber's Clock: a test clock moved by days must not make
        // it look at the file once per interval of those days.
        Effect.forever(Effect.andThen(pause(refreshMillis), Effect.ignore(file.run("look for changes", refresh)))).pipe(Effect.forkScoped)),
      Effect.map(({ registry }) => registry)
    ))
