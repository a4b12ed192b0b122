/**
 * The projection core of one open read-model file: `project` (decode, quarantine, apply and the
 * checkpoint in one transaction per batch), the rebuild's `projectPlanned`, `applyReleased`,
 * `historyUntil` and the Kafka copies filter. ReadModels.ts (live) and ./rebuild.ts (new file)
 * both build on it.
 */
import { Checkpoints, type LogRecord, TraceContext } from "@ocs/event-log"
import { SqliteDatabase } from "@ocs/sqlite"
import { Clock, Effect, Option } from "effect"
import { fileURLToPath } from "node:url"
import { type Accepts, lastOffsetOf, newestReceivedAt, type ProjectOptions } from "./options.ts"
import type * as Plan from "./plan.ts"
import * as Projector from "./projector.ts"
import * as Quarantine from "./quarantine.ts"
import * as Redeliveries from "./redeliveries.ts"

/** The drizzle-kit migrations folder of read-model files (run at open). */
export const migrationsFolder = fileURLToPath(new URL("../../drizzle", import.meta.url))

export const DEFAULT_CONSUMER = "read-models"

/** Kafka mode: how long a dedupe key is remembered against copies from other servers (24 h, the log's default window). */
const DEDUPE_WINDOW_MILLIS = 24 * 3600 * 1000

/** Keeps an SQLite checkpoint from moving backwards when an older batch is redelivered. */
const saveCheckpoint = (handle: SqliteDatabase.Handle, consumer: string, checkpoint: LogRecord.Checkpoint, now: number) => {
  const next = Checkpoints.parseSqlite(checkpoint)
  if (next !== undefined) {
    const current = Checkpoints.load(handle.drizzle, consumer)
    const stored = Option.isSome(current) ? Checkpoints.parseSqlite(current.value) : undefined
    if (stored !== undefined && stored >= next) return
  }
  Checkpoints.save(handle.drizzle, consumer, checkpoint, now)
}

/** Opens (creating and migrating) a read-model file in the current scope. */
export const open = Effect.fnUntraced(function*(options: {
  readonly filename: string
  readonly synchronous?: "NORMAL" | "FULL" | undefined
  readonly busyTimeoutMillis?: number | undefined
  readonly cacheSizeKiB: number
}) {
  const handle = yield* SqliteDatabase.make({
    filename: options.filename,
    migrationsFolder,
    synchronous: options.synchronous ?? "NORMAL",
    busyTimeoutMillis: options.busyTimeoutMillis
  })
  // Upserts land all over the tables' B-trees: a cache that holds them saves re-reading pages.
  yield* handle.use("pragma", (_, client) => client.pragma(`cache_size = -${Math.max(2048, Math.trunc(options.cacheSizeKiB))}`))
  return handle
})

/** The projection core of one open file: `project` plus its prepared statements. */
export const make = Effect.fnUntraced(function*(handle: SqliteDatabase.Handle, defaultConsumer: string, options?: Projector.Options & { readonly detectChanges?: boolean | undefined }) {
  // Records past `detect.after` go through change detection (-1: all; undefined: none). A file
  // started over a log that already held records treats those as history (`historyUntil`).
  const detect: { after: number | undefined } = { after: options?.detectChanges === false ? undefined : -1 }
  if (detect.after !== undefined) {
    const stored = yield* handle.use("historyUntil", (orm) => Checkpoints.load(orm, historyKey(defaultConsumer)))
    const until = Option.isSome(stored) ? Checkpoints.parseSqlite(stored.value) : undefined
    if (until !== undefined) detect.after = until
  }
  const projector = yield* handle.use("prepare", (_, client) => Projector.make(client, options))
  const quarantine = yield* handle.use("prepare", (_, client) => Quarantine.make(client))
  const redeliveries = yield* handle.use("prepare", (_, client) => Redeliveries.make(client, DEDUPE_WINDOW_MILLIS))
  /**
   * Splits a batch by the tenant predicate and remembers the refused records. Runs inside the
   * batch's transaction, so the predicate is asked at the moment the batch commits: a business
   * accepted before a `release` reads its quarantine has no record quarantined after it.
   */
  const admit = (records: ReadonlyArray<LogRecord.LogRecord>, accepts: Accepts | undefined) => {
    // Kafka mode only (records read from a topic): another copy of a fact already applied; a
    // page's copy still counts for its own full pass (docs/architecture.md §4.14).
    if (records.length > 0 && records[0]!.kafka !== undefined) {
      records = records.filter((record) => {
        if (!redeliveries.repeated(record)) return true
        projector.copy(record, detect.after)
        return false
      })
    }
    if (accepts === undefined) return { accepted: records, quarantined: 0 }
    const accepted: Array<LogRecord.LogRecord> = []
    let quarantined = 0
    for (const record of records) {
      if (record.businessId === null || accepts(record.appId, record.businessId)) accepted.push(record)
      else {
        quarantine.add(record)
        quarantined++
      }
    }
    return { accepted, quarantined }
  }
  /** One transaction: the records (planned here, or `plans` made beforehand) and the checkpoint. */
  const write = (records: ReadonlyArray<LogRecord.LogRecord>, options: ProjectOptions | undefined, plans: ReadonlyArray<Plan.Plan> | undefined) =>
    Effect.gen(function*() {
      const started = performance.now()
      const consumer = options?.consumer ?? defaultConsumer
      const lastOffset = lastOffsetOf(records)
      const checkpoint = options?.checkpoint ?? (lastOffset === undefined ? undefined : Checkpoints.sqlite(lastOffset))
      const now = yield* Clock.currentTimeMillis
      const applied = yield* handle.transaction("project", () => {
        let stats: Projector.ApplyStats & { readonly quarantined: number }
        if (plans === undefined) {
          const { accepted, quarantined } = admit(records, options?.accepts)
          stats = { ...projector.apply(accepted, detect.after), quarantined }
        } else {
          // Rebuilds plan ahead on another thread and take no predicate.
          stats = { ...projector.execute(records, plans), quarantined: 0 }
        }
        if (checkpoint !== undefined) saveCheckpoint(handle, consumer, checkpoint, now)
        // A rebuild replays an old log: its dedupe window moves with the records' own time.
        redeliveries.prune(plans === undefined ? now : newestReceivedAt(records) ?? now)
        return stats
      })
      return { ...applied, lastOffset, millis: performance.now() - started }
    })
  /**
   * A batch's span starts its own trace and links to the appends of its records (their
   * `traceparent`, docs/architecture.md §4.17): the hop from append to projection is
   * asynchronous and one batch holds many traces. It is exported when a linked append was.
   */
  const project = (records: ReadonlyArray<LogRecord.LogRecord>, options?: ProjectOptions) => {
    const links = TraceContext.links(records)
    return write(records, options, undefined).pipe(
      Effect.withSpan("ReadModels.project", { root: true, links, sampled: links.length > 0, attributes: { "ocs.records": records.length } })
    )
  }
  const projectPlanned = (records: ReadonlyArray<LogRecord.LogRecord>, plans: ReadonlyArray<Plan.Plan>, options?: ProjectOptions) =>
    write(records, options, plans)
  /** Applies released records and forgets them, in one transaction; no checkpoint moves. */
  const applyReleased = (records: ReadonlyArray<LogRecord.LogRecord>) =>
    Effect.gen(function*() {
      const started = performance.now()
      const applied = yield* handle.transaction("release", () => {
        const stats = projector.apply(records, detect.after)
        for (const record of records) quarantine.remove(record.offset)
        return stats
      })
      return { ...applied, quarantined: 0, lastOffset: lastOffsetOf(records), millis: performance.now() - started }
    })
  /** Records up to `offset` are history: projected, never compared again (kept in the file). */
  const historyUntil = (offset: number) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      handle.transaction("historyUntil", () => {
        if (detect.after === undefined || offset <= detect.after) return
        Checkpoints.save(handle.drizzle, historyKey(defaultConsumer), Checkpoints.sqlite(offset), now)
        detect.after = offset
      }))
  /**
   * Kafka mode, for a rebuild (which plans records before its write transaction): the records
   * without the copies of a fact applied at another position, remembered in the file as a live
   * projection remembers them, so the rebuilt file keeps the same copy and goes on from there.
   */
  const dropCopies = (records: ReadonlyArray<LogRecord.LogRecord>) =>
    records.length === 0 || records[0]!.kafka === undefined
      ? Effect.succeed(records)
      : handle.transaction("dedupe", () => records.filter((record) => !redeliveries.repeated(record)))
  return { project, projectPlanned, quarantine, applyReleased, historyUntil, dropCopies }
})

/** Where a file keeps the offset up to which the log is history for change detection. */
const historyKey = (consumer: string) => `${consumer}:history-until`

