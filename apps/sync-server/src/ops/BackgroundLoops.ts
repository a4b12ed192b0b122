/**
 * The loops the server runs beside its HTTP side, each supervised by `LoopHealth` (a failure
 * is logged, the loop restarted after a backoff, its state shown by /metrics and /readyz):
 *
 * - `projection`: the read models follow the log (docs/architecture.md §3), applying the
 *   records of registered businesses only (the others are quarantined, @ocs/read-models Quarantine);
 * - `tenant-activity`: the last webhook of each tenant, for the silence alert; a tenant whose
 *   business removed the application goes on hold (over Kafka, done on the projection's
 *   subscription, before each batch is projected: no second consumer);
 * - `tenant-watch`: token expiry warnings and webhook silence, hourly.
 *
 * What the last two do is @ocs/tenant-store's `TenantActivity`; this module runs them.
 *
 * The sync supervisor is started by the sync engine under the same supervision.
 */
import { Effect, Fiber, Schedule, Scope } from "effect"
import type { LogRecord } from "@ocs/event-log"
import { Quarantine, ReadModels } from "@ocs/read-models"
import { LoopHealth } from "@ocs/observability/LoopHealth"
import { Ownership } from "@ocs/sync/Ownership"
import { Notices } from "@ocs/sync"
import { type CheckOptions, checkTokens, follow as tenantActivity, noteActivity, watchTenants } from "@ocs/tenant-store/TenantActivity"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"

export { watchTenants }

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
  /** The `token-check` loop: app/checkaccesstoken for connected tenants every `everyMs`. */
  readonly tokenCheck?: (CheckOptions & { readonly everyMs: number }) | undefined
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
    yield* Quarantine.releaseRegistered(store.isRegistered)
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
    const tokenCheck = options.tokenCheck
    if (tokenCheck !== undefined) {
      yield* Effect.forkIn(health.supervise("token-check", Effect.repeat(checkTokens(tokenCheck), Schedule.spaced(tokenCheck.everyMs))), scope)
    }
  })
