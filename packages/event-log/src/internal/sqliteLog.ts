/**
 * The SQLite event log engine: the file, the writer thread, group commit and page reads put
 * together as the `EventLog` service. Public surface: ../SqliteEventLog.ts. The Kafka log
 * reuses it as its outbox (the outbox is an event-log file plus a relay cursor).
 */
import { Clock, Deferred, Effect, Option, Schedule, type Scope, Stream } from "effect"
import * as NodeUrl from "node:url"
import * as Checkpoints from "../Checkpoints.ts"
import type { DirectAppendService } from "../DirectAppend.ts"
import type { EventLogService } from "../EventLog.ts"
import { type EventLogError, InvalidCheckpoint, type SqliteError } from "../EventLogError.ts"
import type { AppendResult, Checkpoint, Delivery, LogRecord, NewRecord, Offset, ReadOptions, SubscribeOptions, TenantFilter } from "../LogRecord.ts"
import type { Lag } from "../LogRecord.ts"
import { SqliteDatabase } from "@ocs/sqlite"
import * as GroupCommit from "./groupCommit.ts"
import * as Queries from "./logQueries.ts"
import * as Pages from "./pages.ts"
import { startWriter } from "./writerThread.ts"

export interface Options {
  readonly filename: string
  /** "FULL" (default): an acknowledged append survives power loss. See SqliteDatabase. */
  readonly synchronous?: "FULL" | "NORMAL" | undefined
  readonly busyTimeoutMillis?: number | undefined
  /** A dedupeKey seen for the same tenant within this window is a duplicate. Default 24 h. */
  readonly dedupeWindowMillis?: number | undefined
  /**
   * Extra time the writer waits after the first pending append before committing, to gather
   * more. Default 0: the group is whatever arrived while the previous commit ran.
   */
  readonly commitWindowMillis?: number | undefined
  /** Upper bound of records per transaction. Default 10,000. */
  readonly maxRecordsPerCommit?: number | undefined
  /** Subscribers also poll this often, to see appends made by other processes. Default 1000. */
  readonly pollIntervalMillis?: number | undefined
}

export const migrationsFolder = NodeUrl.fileURLToPath(new URL("../../drizzle", import.meta.url))

const DAY = 24 * 60 * 60 * 1000

/**
 * The busy timeout of the main-thread connection. SQLite waits for a lock by blocking its
 * thread: on the main thread, a file locked by another process would freeze every request for
 * the whole timeout. Reads (WAL) never wait for writers; the consumer checkpoint writes that do
 * wait give up after this and are retried after a non-blocking pause (see `commit`).
 */
const MAIN_THREAD_BUSY_TIMEOUT_MILLIS = 20

export interface Core {
  readonly service: EventLogService
  /** Appends from plain callbacks, without a fiber (the webhook receiver's path). */
  readonly direct: DirectAppendService
  readonly db: SqliteDatabase.Handle
  /** Completes at the next commit (or never): subscribers and the relay wait on it. */
  readonly nextCommit: () => Deferred.Deferred<void>
  readonly pollIntervalMillis: number
  /** One page of records with offset >= from, in order, all tenants. */
  readonly page: (from: Offset, limit: number) => Effect.Effect<ReadonlyArray<LogRecord>, EventLogError>
  /** How far a reader that handled everything up to `after` is behind (the Kafka relay's backlog). */
  readonly lagAfter: (after: Offset, tenant?: TenantFilter) => Effect.Effect<Lag, SqliteError>
  /** Kills the writer thread as a crash would (tests only). */
  readonly killWriter: () => Promise<void>
}

export const make = Effect.fnUntraced(function*(options: Options): Effect.fn.Return<Core, SqliteError, Scope.Scope> {
  const db = yield* SqliteDatabase.make({
    filename: options.filename,
    migrationsFolder,
    synchronous: options.synchronous,
    busyTimeoutMillis: MAIN_THREAD_BUSY_TIMEOUT_MILLIS
  })
  const busyTimeoutMillis = Math.max(0, Math.trunc(options.busyTimeoutMillis ?? 5000))
  // A locked file: retry every 50 ms (the fiber sleeps, the thread serves) for as long as the
  // configured busy timeout, then fail as a blocking wait would have.
  const whileBusy = Schedule.spaced(50).pipe(
    Schedule.setInputType<SqliteError>(),
    Schedule.while(({ input, elapsed }) => isBusy(input) && elapsed < busyTimeoutMillis)
  )
  const pollIntervalMillis = options.pollIntervalMillis ?? 1000

  // Appends are written by a worker thread with its own connection (./writer.worker.ts): the
  // main thread keeps serving while SQLite inserts and fsyncs. Reads stay on this connection.
  const writer = yield* startWriter({
    filename: options.filename,
    synchronous: options.synchronous ?? "FULL",
    busyTimeoutMillis,
    dedupeWindowMillis: options.dedupeWindowMillis ?? DAY
  })
  const clock = yield* Clock.Clock
  const group = yield* GroupCommit.make({
    filename: options.filename,
    writer,
    now: () => clock.currentTimeMillisUnsafe(),
    commitWindowMillis: options.commitWindowMillis ?? 0,
    maxRecordsPerCommit: options.maxRecordsPerCommit ?? 10_000
  })
  const nextCommit = group.nextCommit

  const append = Effect.fn("EventLog.append")(function*(batch: ReadonlyArray<NewRecord>) {
    const now = yield* Clock.currentTimeMillis
    return yield* Effect.callback<ReadonlyArray<AppendResult>, EventLogError>((resume) => group.append(batch, now, resume))
  })

  const direct: DirectAppendService = {
    append: (batch, onExit) => group.append(batch, clock.currentTimeMillisUnsafe(), onExit)
  }

  const pageOf = Pages.make(db)

  const read = (options: ReadOptions): Stream.Stream<LogRecord, EventLogError> => {
    const pageSize = options.pageSize ?? 500
    return Stream.unwrap(Effect.gen(function*() {
      // A snapshot: records appended after the stream starts are not part of it.
      const head = yield* db.use("read", (_, client) => Queries.head(client))
      const filter: Pages.PageFilter = {
        tenant: options.tenant,
        types: options.types,
        untilOffset: Math.min(head, options.untilOffset ?? Number.MAX_SAFE_INTEGER),
        untilReceivedAt: options.untilReceivedAt
      }
      return Stream.paginate(options.from ?? 0, (from: Offset) =>
        pageOf(from, filter, pageSize).pipe(
          Effect.map((page) => [page, page.length < pageSize ? Option.none() : Option.some(page[page.length - 1]!.offset + 1)] as const)
        ))
    }))
  }

  const commit = Effect.fn("EventLog.commit")(function*(consumer: string, checkpoint: Checkpoint) {
    const now = yield* Clock.currentTimeMillis
    yield* db.transaction("commit", (orm) => Checkpoints.save(orm, consumer, checkpoint, now)).pipe(Effect.retry(whileBusy))
  })

  const checkpoint = Effect.fn("EventLog.checkpoint")(function*(consumer: string) {
    return yield* db.use("checkpoint", (orm) => Checkpoints.load(orm, consumer))
  })

  /** Waits for the next commit in this process, or the poll interval (other processes). */
  const waitForAppend = (signal: Deferred.Deferred<void>) =>
    Effect.race(Deferred.await(signal), Effect.sleep(pollIntervalMillis))

  const subscribe = (consumer: string, options: SubscribeOptions): Stream.Stream<Delivery, EventLogError> => {
    const pageSize = options.pageSize ?? 500
    const filter: Pages.PageFilter = { tenant: options.tenant, types: options.types }
    return Stream.unwrap(Effect.gen(function*() {
      const from = options.from ?? Option.getOrUndefined(yield* checkpoint(consumer))
      let start = 0
      if (from !== undefined) {
        const last = Checkpoints.parseSqlite(from)
        if (last === undefined) {
          return yield* new InvalidCheckpoint({ checkpoint: from, message: `not a checkpoint of an SQLite event log: ${from}` })
        }
        start = last + 1
      }
      return Stream.paginate(start, (cursor: Offset) =>
        Effect.gen(function*() {
          const wake = nextCommit()
          const page = yield* pageOf(cursor, filter, pageSize)
          if (page.length === 0) {
            yield* waitForAppend(wake)
            return [[], Option.some(cursor)] as const
          }
          const deliveries = page.map((record): Delivery => ({ record, checkpoint: Checkpoints.sqlite(record.offset) }))
          return [deliveries, Option.some(page[page.length - 1]!.offset + 1)] as const
        }))
    }))
  }

  const page = (from: Offset, limit: number) => pageOf(from, { tenant: "all" }, limit)

  const head = (tenant?: TenantFilter) => db.use("head", (_, client) => Queries.head(client, tenant))
  const lagAfter = (after: Offset, tenant?: TenantFilter) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => db.use("lag", (_, client) => Queries.lagAfter(client, after, now, tenant)))
  const lag = Effect.fn("EventLog.lag")(function*(from: Checkpoint, tenant?: TenantFilter) {
    const after = Checkpoints.parseSqlite(from)
    if (after === undefined) {
      return yield* new InvalidCheckpoint({ checkpoint: from, message: `not a checkpoint of an SQLite event log: ${from}` })
    }
    return Option.some(yield* lagAfter(after, tenant))
  })

  const service: EventLogService = { append, read, subscribe, commit, checkpoint, head, lag, relayBacklog: Effect.succeed(Option.none()) }
  return { service, direct, db, nextCommit, pollIntervalMillis, page, lagAfter, killWriter: writer.kill }
})

const isBusy = (e: SqliteError) => {
  const code = (e.cause as { code?: unknown } | undefined)?.code
  return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED" || (typeof code === "string" && code.startsWith("SQLITE_BUSY_"))
}
