/**
 * `rebuild`: the log projected from scratch into a new file, on two threads (the planner thread
 * decodes the next batches while this one writes the oldest; ./planner.ts), secondary indexes
 * built once at the end, the file renamed into place only when complete.
 */
import { EventLog, type LogRecord } from "@ocs/event-log"
import { Ids } from "@ocs/protocol"
import { SqliteDatabase } from "@ocs/sqlite"
import type Database from "better-sqlite3"
import { Effect, Stream } from "effect"
import * as NodeFs from "node:fs"
import { RebuildTargetExists, type ReadModelsError } from "../ReadModelsError.ts"
import { addStats, emptyStats, type ProjectStats, type RebuildOptions } from "./options.ts"
import * as Planner from "./planner.ts"
import * as Projection from "./projection.ts"

/**
 * Drops the indexes declared in the schema (not the primary keys) and returns their DDL, for a
 * bulk load that recreates them at the end. Exported for the benchmark's baseline.
 */
export const dropSecondaryIndexes = (client: Database.Database): ReadonlyArray<string> => {
  const rows = client.prepare(
    "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"
  ).all() as ReadonlyArray<{ readonly name: string; readonly sql: string }>
  for (const row of rows) client.exec(`DROP INDEX "${row.name.replaceAll('"', '""')}"`)
  return rows.map((row) => row.sql)
}

/** Batches a rebuild reads and plans ahead of the one it writes (bounded memory: backpressure on the read). */
const BATCHES_AHEAD = 2

const planFailed = (filename: string, cause: unknown) =>
  cause instanceof SqliteDatabase.SqliteError
    ? cause
    : new SqliteDatabase.SqliteError({ filename, operation: "plan", message: `rebuild of ${filename}: planning failed: ${String(cause)}`, cause })

/** Projects the log from scratch into a new file (see `RebuildOptions`). */
export const rebuild = Effect.fn("ReadModels.rebuild")(function*(options: RebuildOptions): Effect.fn.Return<ProjectStats, ReadModelsError, EventLog.EventLog> {
  const log = yield* EventLog.EventLog
  const filename = options.filename
  if (NodeFs.existsSync(filename)) {
    return yield* new RebuildTargetExists({ filename, message: `rebuild refuses to overwrite ${filename}; remove it or choose another file` })
  }
  const work = `${filename}.rebuilding`
  const removeWork = () => {
    for (const f of [work, `${work}-wal`, `${work}-shm`]) NodeFs.rmSync(f, { force: true })
  }
  yield* Effect.sync(removeWork)
  const batchSize = options.batchSize ?? 5000
  const started = performance.now()
  const stats = yield* Effect.scoped(Effect.gen(function*() {
    // First, so that the thread loads while this one opens the file and reads the first batch.
    const pipeline = yield* Planner.make<LogRecord.LogRecord>(filename)
    const handle = yield* Projection.open({ filename: work, cacheSizeKiB: options.cacheSizeKiB ?? 262_144 })
    // A half-written rebuild is thrown away, so this file needs neither fsync nor a WAL until
    // it is complete: pages are written once, straight into the file (the rollback journal in
    // memory still undoes a failed batch).
    // Secondary indexes are built once at the end (sorted, far cheaper than row by row).
    const indexes = yield* handle.use("pragma", (_, client) => {
      client.pragma("journal_mode = MEMORY")
      client.pragma("synchronous = OFF")
      return dropSecondaryIndexes(client)
    })
    const { dropCopies, projectPlanned } = yield* Projection.make(handle, options.consumer ?? Projection.DEFAULT_CONSUMER, { fresh: true, detectChanges: false })
    // Pipeline: the planner thread decodes the next batches while this thread writes the
    // oldest one (plans are pure, so planning ahead changes nothing).
    let total = emptyStats
    const writeUntil = (left: number) =>
      Effect.whileLoop({
        while: () => pipeline.size() > left,
        body: () =>
          Effect.flatMap(
            Effect.tryPromise({ try: () => pipeline.take(), catch: (cause) => planFailed(filename, cause) }),
            ({ plans, records }) => projectPlanned(records, plans)
          ),
        step: (s) => (total = addStats(total, s))
      })
    yield* log.read({
      tenant: options.tenant === undefined ? "all" : Ids.tenantKey(options.tenant),
      untilOffset: options.untilOffset,
      untilReceivedAt: options.untilReceivedAt,
      pageSize: batchSize
    }).pipe(
      Stream.rechunk(batchSize),
      Stream.runForEachArray((page) =>
        Effect.flatMap(dropCopies(page), (records) => {
          if (records.length > 0) pipeline.add(records)
          return writeUntil(BATCHES_AHEAD)
        })),
      Effect.andThen(Effect.suspend(() => writeUntil(0)))
    )
    yield* handle.use("finish", (_, client) => {
      for (const ddl of indexes) client.exec(ddl)
      client.pragma("journal_mode = WAL")
      client.pragma("synchronous = FULL")
      client.pragma("wal_checkpoint(TRUNCATE)")
    })
    return total
  })).pipe(Effect.onError(() => Effect.sync(removeWork)))
  yield* Effect.try({
    try: () => NodeFs.renameSync(work, filename),
    catch: (cause) => new SqliteDatabase.SqliteError({ filename, operation: "rename", message: `rename ${work} to ${filename}: ${String(cause)}`, cause })
  })
  return { ...stats, millis: performance.now() - started }
})

