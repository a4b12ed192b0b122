/**
 * What the service's webhooks tell about the tenants, and the hourly watch over them:
 *
 * - `noteActivity` / `follow`: the last webhook of each tenant (for the silence alert); a
 *   business that removed the application puts its tenant on hold; a `webhooksEnabled`
 *   delivery asks for a gap fill. A server runs `follow` as its `tenant-activity` loop, or
 *   calls `noteActivity` on the projection's batches (Kafka log: one consumer, not two).
 * - `watchTenants`: token expiry warnings (30, 7 and 1 days) and webhook silence, as notices.
 */
import { Effect, Stream } from "effect"
import { EventLog, type LogRecord } from "@ocs/event-log"
import { Notices } from "@ocs/sync"
import { TenantRegistry } from "./TenantRegistry.ts"

const DAY = 24 * 3600 * 1000

/**
 * The business removed the application (docs/api-catalogue.md §10, appUninstalled): its
 * deliveries stop and its token no longer works, so the tenant goes on hold with the reason
 * instead of failing every pull. Granting access again (a new token) makes it active.
 */
const uninstalled = (store: TenantRegistry["Service"], notices: Notices.Notices["Service"], appId: string, businessId: string) =>
  Effect.gen(function*() {
    const message = `business ${businessId} removed application ${appId}: it must install the application and grant access again`
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
    const now = Date.now()
    for (const b of yield* store.businesses()) {
      if (b.expiresAt !== null) {
        const days = (b.expiresAt - now) / DAY
        for (const threshold of [30, 7, 1]) {
          if (days <= threshold && (yield* notices.noticeOnce(b.appId, b.businessId, `expiry-${threshold}`))) {
            const message = days <= 0
              ? `access token of ${b.appId}:${b.businessId} has expired: the business must grant access again`
              : `access token of ${b.appId}:${b.businessId} expires in ${Math.ceil(days)} day(s): ask the business to grant access again`
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
