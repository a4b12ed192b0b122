/**
 * The loops the server runs beside its HTTP side, each supervised by `LoopHealth` (a failure
 * is logged, the loop restarted after a backoff, its state shown by /metrics and /readyz):
 *
 * - `projection`: the read models follow the log (docs/architecture.md, section 5), applying the
 *   records of registered businesses only (the others are quarantined, see ./Quarantine.ts);
 * - `tenant-activity`: the last webhook of each tenant, for the silence alert; a tenant whose
 *   business removed the application goes on hold (over Kafka, done on the projection's
 *   subscription, before each batch is projected: no second consumer);
 * - `tenant-watch`: token expiry warnings and webhook silence, hourly.
 *
 * The sync supervisor is started by the sync engine under the same supervision.
 */
import { Effect, Fiber, Schedule, Scope, Stream } from "effect"
import { EventLog, type LogRecord } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import { LoopHealth } from "@ocs/observability/LoopHealth"
import { Ownership } from "@ocs/sync/Ownership"
import * as Quarantine from "../tenants/Quarantine.ts"
import { Notices } from "@ocs/sync"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"

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
const noteActivity = (records: ReadonlyArray<LogRecord.LogRecord>, onWebhooksEnabled: ((appId: string) => Effect.Effect<void>) | undefined) =>
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
 * Follows webhook records on a subscription of its own (SQLite log: reading the file again is
 * cheap), with its own checkpoint.
 */
const tenantActivity = (onWebhooksEnabled: ((appId: string) => Effect.Effect<void>) | undefined) => Effect.gen(function*() {
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

/**
 * Starts the loops in the current scope. On close, the projection is stopped and then, over the
 * SQLite log, caught up once more (finalizers run in reverse, so after the HTTP server and the
 * sync loops have stopped): the files a stopped server leaves behind are up to date with its
 * log. Over Kafka there is no such last step: the projection's checkpoint is a topic position
 * saved with each batch it applied, the next start resumes from it, and what is still in the
 * outbox is not on the topic to catch up from.
 */
export const start = (options: {
  readonly silenceAlertMs: number
  readonly consumer: string
  /** Told of every webhooksEnabled delivery (the sync engine fills the application's gaps). */
  readonly onWebhooksEnabled?: ((appId: string) => Effect.Effect<void>) | undefined
  /**
   * The tenant activity rides on the projection's subscription instead of a loop of its own
   * (Kafka log: every subscription is a consumer that fetches and decodes every record;
   * docs/architecture.md §4.19). Default false.
   */
  readonly activityOnProjection?: boolean | undefined
  /** Catch the projection up once more on close (SQLite log only, see above). Default true. */
  readonly catchUpOnClose?: boolean | undefined
}) =>
  Effect.gen(function*() {
    const scope = yield* Scope.Scope
    const health = yield* LoopHealth
    const readModels = yield* ReadModels.ReadModels
    const store = yield* TenantRegistry
    const notices = yield* Notices.Notices
    const ownership = yield* Ownership
    // Changes found by the projection are relayed by the tenant's owner only (with several
    // servers, each projection finds the same ones; docs/architecture.md §4.14).
    const follow = { accepts: store.isRegistered, relays: ownership.owns }
    // A store failure stops the projection's subscription like its own failures do (restarted
    // by the supervisor, the batch delivered again), so no activity is skipped.
    const onBatch = options.activityOnProjection === true
      ? (records: ReadonlyArray<LogRecord.LogRecord>) => Effect.orDie(noteActivity(records, options.onWebhooksEnabled).pipe(Effect.provideService(TenantRegistry, store), Effect.provideService(Notices.Notices, notices)))
      : undefined
    // Businesses registered while the server was down (or seeded from the configuration).
    yield* Quarantine.releaseRegistered
    const projection = yield* Effect.forkIn(
      health.supervise("projection", Effect.scoped(Effect.flatMap(readModels.run(options.consumer, { ...follow, onBatch }), Fiber.join))),
      scope
    )
    yield* Effect.addFinalizer(() =>
      options.catchUpOnClose === false
        ? Fiber.interrupt(projection)
        : Fiber.interrupt(projection).pipe(
          Effect.andThen(readModels.catchUp(options.consumer, follow)),
          Effect.catch((e) => Effect.logWarning("final projection catch-up failed; it resumes at the next start", e))
        )
    )
    if (onBatch === undefined) yield* Effect.forkIn(health.supervise("tenant-activity", tenantActivity(options.onWebhooksEnabled)), scope)
    yield* Effect.forkIn(
      health.supervise("tenant-watch", Effect.repeat(watchTenants(options.silenceAlertMs), Schedule.spaced("1 hour"))),
      scope
    )
  })
