/**
 * What the service's webhooks tell about the tenants, and the hourly watch over them:
 *
 * - `noteActivity` / `follow`: the last webhook of each tenant (for the silence alert); a
 *   business that removed the application puts its tenant on hold; a `webhooksEnabled`
 *   delivery asks for a gap fill. A server runs `follow` as its `tenant-activity` loop, or
 *   calls `noteActivity` on the projection's batches (Kafka log: one consumer, not two).
 * - `watchTenants`: token expiry warnings (30, 7 and 1 days) and webhook silence, as notices.
 * - `checkTokens`: `app/checkaccesstoken` for the tenants of applications with a secret key,
 *   keeping expiry and scopes true; a token refused puts its tenant on hold with the connect link.
 */
import { Clock, Effect, Option, Redacted, Semaphore, Stream } from "effect"
import { EventLog, type LogRecord } from "@ocs/event-log"
import { Notices } from "@ocs/sync"
import * as Connect from "./Connect.ts"
import { TenantRegistry } from "./TenantRegistry.ts"

const DAY = 24 * 3600 * 1000

/** "; connect link: <link>" when the application can connect businesses itself, else "". */
export const connectHint = (store: TenantRegistry["Service"], appId: string) =>
  Effect.map(Effect.orElseSucceed(store.app(appId), () => Option.none()), (app) =>
    Option.isSome(app) && app.value.publicUrl !== null && app.value.secretKey !== null
      ? `; connect link: ${Connect.link(app.value.publicUrl, appId)}`
      : "")

/**
 * The business removed the application (docs/api-catalogue.md §10, appUninstalled): its
 * deliveries stop and its token no longer works, so the tenant goes on hold with the reason
 * instead of failing every pull. Granting access again (a new token) makes it active.
 */
const uninstalled = (store: TenantRegistry["Service"], notices: Notices.Notices["Service"], appId: string, businessId: string) =>
  Effect.gen(function*() {
    const message = `business ${businessId} removed application ${appId}: it must install the application and grant access again${yield* connectHint(store, appId)}`
    if (!(yield* store.setStatus(appId, businessId, "attention", { code: "APP_UNINSTALLED", message }))) return
    yield* notices.recordError({ appId, businessId, resource: null, tag: "AppUninstalled", message })
    yield* Effect.logWarning(message)
  })

const isActivity = (record: LogRecord.LogRecord) =>
  record.source === "webhook" && (record.businessId !== null || record.type === "webhooksEnabled")

/**
 * What a batch of log records tells about the tenants: when each last heard from the service,
 * which business removed the application (on hold), which application's deliveries are back.
 * Repeating a batch changes nothing more (the latest time wins; on hold stays on hold; a gap
 * fill asked twice is one gap fill).
 */
export const noteActivity = (records: ReadonlyArray<LogRecord.LogRecord>, onWebhooksEnabled: ((appId: string) => Effect.Effect<void>) | undefined) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    const notices = yield* Notices.Notices
    // The latest webhook of each tenant in the batch, one store write per tenant.
    const latest = new Map<string, { readonly appId: string; readonly businessId: string; at: number }>()
    for (const record of records) {
      if (!isActivity(record) || record.businessId === null) continue
      const k = `${record.appId}:${record.businessId}`
      const seen = latest.get(k)
      if (seen === undefined) latest.set(k, { appId: record.appId, businessId: record.businessId, at: record.receivedAt })
      else seen.at = Math.max(seen.at, record.receivedAt)
    }
    for (const t of latest.values()) yield* store.touchWebhook(t.appId, t.businessId, t.at)
    for (const record of records) {
      if (!isActivity(record)) continue
      if (record.type === "appUninstalled") yield* uninstalled(store, notices, record.appId, record.businessId!)
      // The service re-sends webhooksEnabled when deliveries fail (docs/api-catalogue.md
      // §10): what it failed to deliver is pulled (gap fill, docs/architecture.md §4.14).
      if (record.type === "webhooksEnabled" && onWebhooksEnabled !== undefined) yield* onWebhooksEnabled(record.appId)
    }
  })

/**
 * The `tenant-activity` loop: follows webhook records on a subscription of its own (SQLite log: reading the file again is
 * cheap), with its own checkpoint.
 */
export const follow = (onWebhooksEnabled: ((appId: string) => Effect.Effect<void>) | undefined) => Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  return yield* log.subscribe("tenant-activity", { tenant: "all" }).pipe(
    Stream.filter((d) => isActivity(d.record)),
    Stream.groupedWithin(500, "1 second"),
    Stream.runForEach((batch) =>
      Effect.gen(function*() {
        yield* noteActivity(batch.map((d) => d.record), onWebhooksEnabled)
        yield* log.commit("tenant-activity", batch[batch.length - 1]!.checkpoint)
      })
    )
  )
})

/** Token expiry warnings (30, 7 and 1 days before; docs/api-catalogue.md, Authentication 6) and webhook silence. */
export const watchTenants = (silenceAlertMs: number) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    const notices = yield* Notices.Notices
    // The fiber's clock, so that TestClock drives the warnings.
    const now = yield* Clock.currentTimeMillis
    for (const b of yield* store.businesses()) {
      if (b.expiresAt !== null) {
        const days = (b.expiresAt - now) / DAY
        for (const threshold of [30, 7, 1]) {
          if (days <= threshold && (yield* notices.noticeOnce(b.appId, b.businessId, `expiry-${threshold}`))) {
            const hint = yield* connectHint(store, b.appId)
            const message = days <= 0
              ? `access token of ${b.appId}:${b.businessId} has expired: the business must grant access again${hint}`
              : `access token of ${b.appId}:${b.businessId} expires in ${Math.ceil(days)} day(s): ask the business to grant access again${hint}`
            yield* Effect.logWarning(message)
            yield* notices.recordError({ appId: b.appId, businessId: b.businessId, resource: null, tag: `TokenExpiry${threshold}d`, message })
          }
        }
      }
      const silentSince = b.lastWebhookAt
      if (silentSince !== null && now - silentSince > silenceAlertMs) {
        const day = Math.floor(now / DAY)
        if (yield* notices.noticeOnce(b.appId, b.businessId, `silence-${day}`)) {
          const message = `no webhook from ${b.appId}:${b.businessId} for ${Math.round((now - silentSince) / 60000)} minutes: webhooks may be off or failing`
          yield* Effect.logWarning(message)
          yield* notices.recordError({ appId: b.appId, businessId: b.businessId, resource: null, tag: "WebhookSilence", message })
        }
      }
    }
  }).pipe(Effect.catch((e) => Effect.logError("tenant watch failed", e)))

/** What `checkTokens` needs to reach the service. */
export interface CheckOptions {
  readonly posBaseUrl: string
  readonly timeoutMs?: number | undefined
}

const sameList = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => a.length === b.length && a.every((x, i) => x === b[i])

/**
 * Grants are written one at a time in this process: a new grant (the connect callback) and the
 * write-back of a token check. The check's answer is about the token it sent; a new grant may
 * have replaced that token while the service answered, so the write-back re-reads the tenant
 * under this lock and writes only if the token is still the one checked.
 */
export const grantLock = Semaphore.makeUnsafe(1)

/**
 * Checks one tenant's token with the service (docs/api-catalogue.md §8): a changed expiry or
 * scope is written back (same token); ERR_INVALID_ACCESS_TOKEN puts the tenant on hold with the
 * connect link. Nothing is done for an application without a secret key.
 */
export const checkToken = (options: CheckOptions, appId: string, businessId: string) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    const app = yield* store.app(appId)
    const b = yield* store.business(appId, businessId)
    if (Option.isNone(app) || app.value.secretKey === null || Option.isNone(b)) return "skipped" as const
    const sent = Redacted.value(b.value.accessToken)
    const checked = yield* Effect.result(Connect.check({
      posBaseUrl: options.posBaseUrl,
      appId,
      businessId,
      accessToken: b.value.accessToken,
      secretKey: app.value.secretKey,
      timeoutMs: options.timeoutMs
    }))
    return yield* grantLock.withPermit(Effect.gen(function*() {
      const current = yield* store.business(appId, businessId)
      // Granted again while the service answered: the answer is about a token no longer used.
      if (Option.isNone(current) || Redacted.value(current.value.accessToken) !== sent) return "superseded" as const
      if (checked._tag === "Failure") {
        const e = checked.failure
        if (e.errorCode === "ERR_INVALID_ACCESS_TOKEN" && current.value.status !== "attention") {
          const message = `access token of ${appId}:${businessId} is no longer accepted (${e.message}): the business must grant access again${yield* connectHint(store, appId)}`
          yield* store.setStatus(appId, businessId, "attention", { code: e.errorCode, message })
          yield* Effect.logWarning(message)
        } else yield* Effect.logWarning(`token check of ${appId}:${businessId}: ${e.errorCode}`)
        return e.errorCode
      }
      const c = checked.success
      const t = current.value
      if (t.expiresAt !== c.expiresAt || !sameList(t.permissions, c.permissions) || !sameList(t.depots, c.depots) || !sameList(t.pages, c.pages)) {
        yield* store.upsertBusiness({
          appId,
          businessId,
          accessToken: Redacted.value(t.accessToken),
          version: t.version,
          permissions: c.permissions,
          depots: c.depots,
          pages: c.pages,
          grantedAt: t.grantedAt,
          expiresAt: c.expiresAt
        })
        // upsertBusiness makes a tenant active again; one paused by its operator stays paused.
      }
      return "ok" as const
    }))
  })

/** `checkToken` for every tenant of an application with a secret key. */
export const checkTokens = (options: CheckOptions) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    const connectable = new Set((yield* store.apps()).filter((a) => a.connect).map((a) => a.appId))
    for (const b of yield* store.businesses()) {
      if (connectable.has(b.appId)) yield* checkToken(options, b.appId, b.businessId)
    }
  }).pipe(Effect.catch((e) => Effect.logError("token check failed", e)))
