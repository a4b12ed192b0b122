/**
 * ReadModels: products, stock, orders, bills, customers, depots, categories, brands, payments
 * and documents projected from the event log into one SQLite file (docs/architecture.md §3).
 *
 * - `project(records)`: decodes a batch of log records (`DomainEvent.decode`) and writes the
 *   rows and the consumer's checkpoint in ONE transaction, so a crash just replays the batch.
 * - `run` follows the log from the stored checkpoint, in batches; `catchUp` projects what the
 *   log holds now and returns; `rebuild` projects the log from scratch into a new file.
 * - A tenant predicate (`accepts`) quarantines the records of businesses not accepted yet: the
 *   checkpoint moves past them, `quarantine` lists them, `release` projects them later.
 * - The read API: every query names its tenant.
 */
import { Checkpoints, EventLog, type LogRecord } from "@ocs/event-log"
import { Ids } from "@ocs/protocol"
import { Context, Duration, Effect, type Fiber, Layer, Option, type Scope, Stream } from "effect"
import * as ChangeRelay from "./internal/changeRelay.ts"
import { addStats, emptyStats, type FollowOptions, type ProjectOptions, type ProjectStats, type RebuildOptions } from "./internal/options.ts"
import * as Projection from "./internal/projection.ts"
import { rebuild } from "./internal/rebuild.ts"
import * as Projections from "./projections/index.ts"
import * as ReadApi from "./ReadApi.ts"
import { type ReadModelsError, type SqliteError, UnsupportedCheckpoint } from "./ReadModelsError.ts"
import type * as V from "./Views.ts"

export type { Digest } from "./internal/digest.ts"
export type { Accepts, FollowOptions, ProjectOptions, ProjectStats, RebuildOptions } from "./internal/options.ts"
export { dropSecondaryIndexes, rebuild } from "./internal/rebuild.ts"

/** The drizzle-kit migrations folder of read-model files (run at open). */
export const migrationsFolder = Projection.migrationsFolder

export const DEFAULT_CONSUMER = Projection.DEFAULT_CONSUMER

/** The tables projected from the log, as `digest` covers them (bookkeeping is not). */
export const projectedTables: ReadonlyArray<string> = Projections.projectedTables.map((t) => t.name)

export interface Options {
  readonly filename: string
  /** Name the checkpoint is saved under. Default "read-models". */
  readonly consumer?: string | undefined
  /**
   * Default "NORMAL": the log is the durable source and the checkpoint commits with the rows,
   * so losing the last commits on power loss only means replaying them.
   */
  readonly synchronous?: "NORMAL" | "FULL" | undefined
  /** Records per transaction for `run`, `catchUp` and `rebuild`. Default 2000. */
  readonly batchSize?: number | undefined
  /** `run` commits a partial batch after this long. Default 200 ms. */
  readonly maxBatchWaitMillis?: number | undefined
  readonly busyTimeoutMillis?: number | undefined
  /** SQLite page cache of the connection in KiB. Default 65536 (64 MiB). */
  readonly cacheSizeKiB?: number | undefined
  /**
   * Compare what pulls see with the copy and relay the changes found to the log (default true;
   * docs/architecture.md §4.14). `rebuild` never does: the changes are in the log already.
   */
  readonly detectChanges?: boolean | undefined
}

export interface ReadModelsService extends ReadApi.ReadApi {
  readonly filename: string
  readonly project: (records: ReadonlyArray<LogRecord.LogRecord>, options?: ProjectOptions) => Effect.Effect<ProjectStats, SqliteError>
  readonly checkpoint: (consumer?: string) => Effect.Effect<Option.Option<LogRecord.Checkpoint>, SqliteError>
  /** Projects every record after the stored checkpoint present in the log now (SQLite log). */
  readonly catchUp: (consumer?: string, options?: FollowOptions) => Effect.Effect<ProjectStats, ReadModelsError, EventLog.EventLog>
  /** Follows the log from the stored checkpoint in a fiber of the current scope. */
  readonly run: (consumer?: string, options?: FollowOptions) => Effect.Effect<Fiber.Fiber<void, ReadModelsError>, SqliteError, EventLog.EventLog | Scope.Scope>
  /** Quarantined records: counts per business and the latest records. */
  readonly quarantine: (options?: V.QuarantineQuery) => Effect.Effect<V.Quarantine, SqliteError>
  /**
   * Projects the quarantined records of one business from the log (read back by offset), then
   * removes them from the quarantine, batch by batch in one transaction each. No checkpoint
   * moves. A record applied this late goes through the conflict rule like any other, so it never
   * replaces a newer observation already applied.
   */
  readonly release: (tenant: V.Tenant) => Effect.Effect<ProjectStats, ReadModelsError, EventLog.EventLog>
  readonly rebuild: (options: RebuildOptions) => Effect.Effect<ProjectStats, ReadModelsError, EventLog.EventLog>
  /**
   * Appends the changes waiting in the change outbox to the log, oldest first, as `changes`
   * records (dedupe key `changes:<record that revealed them>`, so a relay repeated after a
   * crash appends nothing twice), then forgets them. `run` does it after every batch.
   */
  readonly relayChanges: Effect.Effect<number, ReadModelsError, EventLog.EventLog>
  /**
   * Records up to `offset` (inclusive) are history for change detection: projected, never
   * compared (their changes are in the log already). For a file started empty over a log that
   * already holds records, e.g. after the old file was deleted: give it the log's last offset
   * before it projects anything. Kept in the file; it never moves back.
   */
  readonly historyUntil: (offset: number) => Effect.Effect<void, SqliteError>
}

export const make = Effect.fnUntraced(function*(options: Options): Effect.fn.Return<ReadModelsService, SqliteError, Scope.Scope> {
  const defaultConsumer = options.consumer ?? Projection.DEFAULT_CONSUMER
  const batchSize = options.batchSize ?? 2000
  const maxWait = Duration.millis(options.maxBatchWaitMillis ?? 200)
  const handle = yield* Projection.open({ ...options, cacheSizeKiB: options.cacheSizeKiB ?? 65_536 })
  const { applyReleased, historyUntil, project, quarantine } = yield* Projection.make(handle, defaultConsumer, { detectChanges: options.detectChanges })
  const { relay } = yield* ChangeRelay.make(handle)
  const relayChanges = relay(undefined)
  const checkpoint = (consumer = defaultConsumer) => handle.use("checkpoint", (orm) => Checkpoints.load(orm, consumer))

  const catchUp = Effect.fn("ReadModels.catchUp")(function*(consumer = defaultConsumer, options?: FollowOptions) {
    const log = yield* EventLog.EventLog
    const stored = yield* checkpoint(consumer)
    let from = 0
    if (Option.isSome(stored)) {
      const last = Checkpoints.parseSqlite(stored.value)
      if (last === undefined) {
        return yield* new UnsupportedCheckpoint({ consumer, checkpoint: stored.value, message: `catchUp resumes SQLite checkpoints only; got ${stored.value}` })
      }
      from = last + 1
    }
    let total = emptyStats
    yield* log.read({ tenant: "all", from, pageSize: batchSize }).pipe(
      Stream.rechunk(batchSize),
      Stream.runForEachArray((page) => Effect.map(project(page, { consumer, accepts: options?.accepts }), (s) => (total = addStats(total, s))))
    )
    yield* relay(options?.relays)
    return total
  })

  const run = Effect.fn("ReadModels.run")(function*(consumer = defaultConsumer, options?: FollowOptions) {
    const log = yield* EventLog.EventLog
    const stored = yield* checkpoint(consumer)
    // Changes a crash left in the outbox go first.
    yield* relay(options?.relays).pipe(Effect.catch((e) => Effect.logWarning(`change relay: ${e.message}`)))
    return yield* log.subscribe(consumer, { tenant: "all", from: Option.getOrUndefined(stored), pageSize: batchSize }).pipe(
      Stream.groupedWithin(batchSize, maxWait),
      Stream.runForEach((deliveries) => {
        const records = deliveries.map((d) => d.record)
        const projected = project(records, { consumer, checkpoint: deliveries[deliveries.length - 1]!.checkpoint, accepts: options?.accepts }).pipe(
          Effect.flatMap((stats) => (stats.changes ?? 0) > 0 ? relay(options?.relays) : Effect.void)
        )
        return options?.onBatch === undefined ? projected : Effect.andThen(options.onBatch(records), projected)
      }),
      Effect.forkScoped
    )
  })

  const release = Effect.fn("ReadModels.release")(function*(tenant: V.Tenant) {
    const log = yield* EventLog.EventLog
    const offsets = yield* handle.use("quarantined", () => quarantine.offsets(tenant))
    if (offsets.length === 0) return emptyStats
    const wanted = new Set(offsets)
    let total = emptyStats
    // One read over the span of the tenant's quarantined offsets (its own records only), keeping
    // the quarantined ones; in log order, so released records apply in the order they came.
    yield* log.read({ tenant: Ids.tenantKey(tenant), from: offsets[0], untilOffset: offsets[offsets.length - 1], pageSize: batchSize }).pipe(
      Stream.filter((record) => wanted.has(record.offset)),
      Stream.rechunk(batchSize),
      Stream.runForEachArray((page) => Effect.map(applyReleased(page), (s) => (total = addStats(total, s))))
    )
    return total
  })

  return {
    ...ReadApi.make(handle),
    filename: options.filename,
    project,
    checkpoint,
    catchUp,
    run,
    quarantine: (o) => handle.use("quarantine", () => quarantine.list(o)),
    release,
    rebuild,
    relayChanges,
    historyUntil,
  }
})

export class ReadModels extends Context.Service<ReadModels, ReadModelsService>()("@ocs/read-models/ReadModels") {
  static readonly layer = (options: Options): Layer.Layer<ReadModels, SqliteError> => Layer.effect(ReadModels, make(options))
}
