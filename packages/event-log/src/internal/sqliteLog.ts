/**
 * The SQLite event log engine. Public surface: ../SqliteEventLog.ts. The Kafka log reuses it
 * as its outbox (the outbox is an event-log file plus a relay cursor).
 */
import * as Json from "@ocs/protocol/Json"
import type Database from "better-sqlite3"
import { max } from "drizzle-orm"
import { Clock, Deferred, Effect, Exit, Option, Result, Schema, type Scope, Stream } from "effect"
import * as NodeUrl from "node:url"
import { Worker } from "node:worker_threads"
import * as Checkpoints from "../Checkpoints.ts"
import {
  EventLogClosed,
  type EventLogError,
  InvalidCheckpoint,
  InvalidRecord,
  RecordDecodeError,
  SqliteError
} from "../EventLogError.ts"
import type { EventLogService } from "../EventLog.ts"
import {
  type AppendResult,
  type Checkpoint,
  type Delivery,
  DigitString,
  isPlainNewRecord,
  type LogRecord,
  NewRecord,
  type Offset,
  type ReadOptions,
  Source,
  type SubscribeOptions,
  tenantKey,
  uuidv7
} from "../LogRecord.ts"
import { SqliteDatabase } from "@ocs/sqlite"
import { records } from "../Tables.ts"
import { isDigits, isNullOrString, isPlainObject, isSource } from "./plain.ts"
import { encodeBatch } from "./rowCodec.ts"
import type { Outcomes, Row, WriteRequest, WriterConfig, WriterMessage } from "./writer.worker.ts"

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

interface Pending {
  readonly rows: ReadonlyArray<Row>
  readonly done: (exit: Exit.Exit<ReadonlyArray<AppendResult>, EventLogError>) => void
}

/** Transactions sent to the writer thread and not yet answered, at most. */
const MAX_IN_FLIGHT = 2

const decodeNewRecord = Schema.decodeUnknownExit(NewRecord)

/** The results of the append call whose rows start at `start` in the batch. */
const toResults = (rows: ReadonlyArray<Row>, outcomes: Outcomes, start: number) =>
  rows.map((row, i): AppendResult => {
    const offset = outcomes.offsets[start + i]!
    return offset > 0
      ? { _tag: "Appended", offset, id: row.id }
      : { _tag: "Duplicate", offset: -offset, id: outcomes.duplicateIds?.[start + i] ?? "" }
  })

// Under Node's type stripping (and vitest) this module is the .ts source; built, it is .js.
const writerUrl = new URL(import.meta.url.endsWith(".ts") ? "./writer.worker.ts" : "./writer.worker.js", import.meta.url)

interface Thread {
  readonly worker: Worker
  readonly exited: Promise<number>
}

type Written = Result.Result<Outcomes, SqliteError>

interface Writer {
  /**
   * Sends one transaction holding these append calls; `done` runs once it committed (or the
   * thread is gone). Batches are committed, and answered, in the order they were sent.
   */
  readonly write: (now: number, groups: ReadonlyArray<ReadonlyArray<Row>>, done: (written: Written) => void) => void
  readonly error: (message: string) => SqliteError
  /** Stops the thread abruptly, as a crash would (tests). */
  readonly kill: () => Promise<void>
}

/**
 * Starts the writer thread (resolves once it opened its connection) and stops it when the scope
 * closes. At most one batch is in flight. If the thread dies, the batch in flight and every
 * later one fail with SqliteError: an append is never acknowledged without its commit.
 */
const startWriter = (config: WriterConfig): Effect.Effect<Writer, SqliteError, Scope.Scope> => {
  const error = (operation: string) => (message: string) =>
    new SqliteError({ filename: config.filename, operation, message: `${operation} on ${config.filename}: ${message}`, cause: new Error(message) })
  const appendError = error("append")
  return Effect.acquireRelease(
    Effect.callback<Thread, SqliteError>((resume) => {
      const worker = new Worker(writerUrl, { workerData: config })
      const thread: Thread = { worker, exited: new Promise((ok) => worker.once("exit", ok)) }
      const done = (result: Effect.Effect<Thread, SqliteError>) => {
        worker.off("message", onMessage)
        worker.off("error", onError)
        worker.off("exit", onExit)
        resume(result)
      }
      const onMessage = (message: WriterMessage) => {
        if (message._tag === "Ready") done(Effect.succeed(thread))
        else if (message._tag === "OpenFailed") {
          void worker.terminate()
          done(Effect.fail(error("open")(`writer thread: ${message.error}`)))
        }
      }
      const onError = (cause: Error) => done(Effect.fail(error("open")(`writer thread failed: ${cause.message}`)))
      const onExit = (code: number) => done(Effect.fail(error("open")(`writer thread exited with code ${code}`)))
      worker.on("message", onMessage)
      worker.on("error", onError)
      worker.on("exit", onExit)
    }),
    ({ worker, exited }) =>
      Effect.promise(() => {
        // The thread closes its connection and exits; if it does not within 10 s, stop it.
        // oxlint-disable-next-line unicorn/require-post-message-target-origin -- node:worker_threads, not window
        worker.postMessage("close")
        const timer = setTimeout(() => void worker.terminate(), 10_000)
        return exited.then(() => clearTimeout(timer))
      })
  ).pipe(Effect.map(({ worker }): Writer => {
    // Idle, the thread does not keep the process alive; with a batch in flight it does.
    worker.unref()
    let seq = 0
    const inFlight = new Map<number, (written: Written) => void>()
    let dead: string | undefined
    const settle = (id: number, written: Written) => {
      const done = inFlight.get(id)
      if (done === undefined) return
      inFlight.delete(id)
      if (inFlight.size === 0) worker.unref()
      done(written)
    }
    const die = (message: string) => {
      dead ??= message
      // Deleting the visited entry while iterating a Map is well defined.
      for (const id of inFlight.keys()) settle(id, Result.fail(appendError(message)))
    }
    worker.on("message", (message: WriterMessage) => {
      if (message._tag === "Written") settle(message.seq, Result.succeed(message.outcomes))
      else if (message._tag === "Refused") settle(message.seq, Result.fail(appendError(`writer thread refused the batch: ${message.error}`)))
    })
    worker.on("error", (cause) => die(`writer thread failed: ${cause.message}`))
    worker.on("exit", (code) => die(`writer thread exited with code ${code}`))
    const write = (now: number, groups: ReadonlyArray<ReadonlyArray<Row>>, done: (written: Written) => void) => {
      if (dead !== undefined) return done(Result.fail(appendError(dead)))
      const id = ++seq
      inFlight.set(id, done)
      worker.ref()
      try {
        // oxlint-disable-next-line unicorn/require-post-message-target-origin -- node:worker_threads, not window
        worker.postMessage({ seq: id, now, groups: encodeBatch(groups) } satisfies WriteRequest)
      } catch (cause) {
        settle(id, Result.fail(appendError(`could not send the batch: ${cause instanceof Error ? cause.message : String(cause)}`)))
      }
    }
    return { write, error: appendError, kill: () => worker.terminate().then(() => undefined) }
  }))
}

const entityIdOf = (record: NewRecord): string | null => {
  if (record.entityId !== undefined) return record.entityId
  const fromMeta = record.meta?.["entityId"]
  if (typeof fromMeta === "string") return fromMeta
  if (typeof fromMeta === "number" || typeof fromMeta === "bigint") return String(fromMeta)
  return null
}

/** The row as stored; decoded with Schema before anything trusts it. */
const RecordRow = Schema.Struct({
  offset: Schema.Int,
  id: Schema.String,
  tenant: Schema.optional(Schema.String),
  appId: DigitString,
  businessId: Schema.NullOr(DigitString),
  source: Source,
  type: Schema.String,
  receivedAt: Schema.Int,
  body: Schema.String,
  dedupeKey: Schema.NullOr(Schema.String),
  meta: Schema.String,
  entityId: Schema.NullOr(Schema.String)
})
type RecordRow = typeof RecordRow.Type
const decodeRow = Schema.decodeUnknownExit(RecordRow)

/**
 * True when `u` is a plain object that `RecordRow` accepts as it is (a row as better-sqlite3
 * returns it): every page read checks its rows with this instead of running the schema over
 * each one. Anything else goes through the schema, which decides and says why.
 */
export const isPlainRecordRow = (u: unknown): u is RecordRow => {
  if (!isPlainObject(u)) return false
  const businessId = u["businessId"]
  const tenant = u["tenant"]
  return Number.isSafeInteger(u["offset"]) &&
    typeof u["id"] === "string" &&
    (tenant === undefined || typeof tenant === "string") &&
    isDigits(u["appId"]) &&
    (businessId === null || isDigits(businessId)) &&
    isSource(u["source"]) &&
    typeof u["type"] === "string" &&
    Number.isSafeInteger(u["receivedAt"]) &&
    typeof u["body"] === "string" &&
    isNullOrString(u["dedupeKey"]) &&
    typeof u["meta"] === "string" &&
    isNullOrString(u["entityId"])
}

/** Decodes a stored row (or the same shape from a Kafka message) into a LogRecord. */
export const rowToRecord = (row: unknown, where: string): Result.Result<LogRecord, RecordDecodeError> => {
  let r: RecordRow
  if (isPlainRecordRow(row)) r = row
  else {
    const exit = decodeRow(row)
    if (exit._tag === "Failure") {
      return Result.fail(new RecordDecodeError({ where, message: `stored record does not decode: ${String(exit.cause)}` }))
    }
    r = exit.value
  }
  // Meta "{}" is by far the most common value: skip the parser for it.
  const meta = r.meta === "{}" ? Result.succeed({}) : Json.parse(r.meta)
  if (Result.isFailure(meta) || typeof meta.success !== "object" || meta.success === null || Array.isArray(meta.success)) {
    return Result.fail(new RecordDecodeError({ where, message: `record ${r.offset} (${r.id}): meta is not a JSON object` }))
  }
  return Result.succeed({
    offset: r.offset,
    id: r.id,
    appId: r.appId,
    businessId: r.businessId,
    source: r.source,
    type: r.type,
    receivedAt: r.receivedAt,
    body: r.body,
    dedupeKey: r.dedupeKey,
    meta: meta.success as LogRecord["meta"],
    entityId: r.entityId
  })
}

/** What a page of records is filtered on, besides its first offset. */
interface PageFilter {
  /** A tenant key, or "all". */
  readonly tenant: string
  readonly types?: ReadonlyArray<string> | undefined
  readonly untilOffset?: number | undefined
  readonly untilReceivedAt?: number | undefined
}

/** The columns of a page, named as RecordRow (what rowToRecord decodes). */
const PAGE_COLUMNS = `"offset", id, tenant, app_id AS appId, business_id AS businessId, source, type, received_at AS receivedAt, ` +
  `body, dedupe_key AS dedupeKey, meta, entity_id AS entityId`

export interface Core {
  readonly service: EventLogService
  readonly db: SqliteDatabase.Handle
  /** Completes at the next commit (or never): subscribers and the relay wait on it. */
  readonly nextCommit: () => Deferred.Deferred<void>
  readonly pollIntervalMillis: number
  /** One page of records with offset >= from, in order, all tenants. */
  readonly page: (from: Offset, limit: number) => Effect.Effect<ReadonlyArray<LogRecord>, EventLogError>
  /** Kills the writer thread as a crash would (tests only). */
  readonly killWriter: () => Promise<void>
}

export const make = Effect.fnUntraced(function*(options: Options): Effect.fn.Return<Core, SqliteError, Scope.Scope> {
  const db = yield* SqliteDatabase.make({
    filename: options.filename,
    migrationsFolder,
    synchronous: options.synchronous,
    busyTimeoutMillis: options.busyTimeoutMillis
  })
  const dedupeWindow = options.dedupeWindowMillis ?? DAY
  const commitWindow = options.commitWindowMillis ?? 0
  const maxPerCommit = options.maxRecordsPerCommit ?? 10_000
  const pollIntervalMillis = options.pollIntervalMillis ?? 1000

  // Appends are written by a worker thread with its own connection (./writer.worker.ts): the
  // main thread keeps serving while SQLite inserts and fsyncs. Reads stay on this connection.
  const thread = yield* startWriter({
    filename: options.filename,
    synchronous: options.synchronous ?? "FULL",
    busyTimeoutMillis: Math.max(0, Math.trunc(options.busyTimeoutMillis ?? 5000)),
    dedupeWindowMillis: dedupeWindow
  })

  let signal = Deferred.makeUnsafe<void>()
  const nextCommit = () => signal
  const notify = () => {
    const previous = signal
    signal = Deferred.makeUnsafe<void>()
    Deferred.doneUnsafe(previous, Effect.void)
  }

  // Group commit, in plain callbacks (an append from a request listener costs no fiber): the
  // appends that arrive in one turn of the event loop (or within commitWindowMillis) form one
  // transaction. Up to two transactions are in flight, so the writer thread commits one while
  // this thread gathers the next: neither waits for the other.
  const clock = yield* Clock.Clock
  let pending: Array<Pending> = []
  let inFlight = 0
  let scheduled = false
  let closed = false

  const flush = () => {
    scheduled = false
    if (closed || pending.length === 0) return
    let count = 0
    let take = 0
    while (take < pending.length && (take === 0 || count + pending[take]!.rows.length <= maxPerCommit)) {
      count += pending[take]!.rows.length
      take++
    }
    const group = take === pending.length ? pending : pending.slice(0, take)
    pending = take === pending.length ? [] : pending.slice(take)
    inFlight++
    thread.write(clock.currentTimeMillisUnsafe(), group.map((p) => p.rows), (written) => {
      inFlight--
      if (Result.isFailure(written)) {
        for (const p of group) p.done(Exit.fail(written.failure))
      } else {
        const outcomes = written.success
        let start = 0
        group.forEach((p, i) => {
          const error = outcomes.errors?.[i] ?? (start + p.rows.length > outcomes.offsets.length ? "the writer thread answered no result" : null)
          p.done(error !== null ? Exit.fail(thread.error(error)) : Exit.succeed(toResults(p.rows, outcomes, start)))
          start += p.rows.length
        })
      }
      notify()
      schedule()
    })
    schedule()
  }

  const schedule = () => {
    if (scheduled || closed || inFlight >= MAX_IN_FLIGHT || pending.length === 0) return
    scheduled = true
    if (commitWindow > 0) setTimeout(flush, commitWindow)
    else setImmediate(flush)
  }

  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      closed = true
      const left = pending
      pending = []
      for (const p of left) {
        p.done(Exit.fail(new EventLogClosed({ message: `event log ${options.filename} closed before the append was written` })))
      }
    })
  )

  /** Validates and completes the records (ids, receivedAt), or says which one is invalid. */
  const toRows = (batch: ReadonlyArray<NewRecord>, now: number): Result.Result<Array<Row>, InvalidRecord> => {
    const rows: Array<Row> = []
    for (let i = 0; i < batch.length; i++) {
      const input = batch[i]
      let r: NewRecord
      if (isPlainNewRecord(input)) r = input
      else {
        const exit = decodeNewRecord(input)
        if (exit._tag === "Failure") return Result.fail(new InvalidRecord({ index: i, message: `record ${i}: ${String(exit.cause)}` }))
        r = exit.value
      }
      rows.push({
        id: r.id ?? uuidv7(now),
        idGiven: r.id !== undefined,
        tenant: tenantKey(r.appId, r.businessId),
        appId: r.appId,
        businessId: r.businessId,
        source: r.source,
        type: r.type,
        receivedAt: r.receivedAt ?? now,
        body: r.body,
        dedupeKey: r.dedupeKey ?? null,
        meta: r.meta === undefined ? "{}" : Json.stringify(r.meta),
        entityId: entityIdOf(r)
      })
    }
    return Result.succeed(rows)
  }

  const appendAt = (batch: ReadonlyArray<NewRecord>, now: number, done: Pending["done"]): void => {
    if (batch.length === 0) return done(Exit.succeed([]))
    if (closed) return done(Exit.fail(new EventLogClosed({ message: `event log ${options.filename} is closed` })))
    const rows = toRows(batch, now)
    if (Result.isFailure(rows)) return done(Exit.fail(rows.failure))
    pending.push({ rows: rows.success, done })
    schedule()
  }

  const append = Effect.fn("EventLog.append")(function*(batch: ReadonlyArray<NewRecord>) {
    const now = yield* Clock.currentTimeMillis
    return yield* Effect.callback<ReadonlyArray<AppendResult>, EventLogError>((resume) => appendAt(batch, now, resume))
  })

  const appendUnsafe: EventLogService["appendUnsafe"] = (batch, onExit) => {
    try {
      appendAt(batch, clock.currentTimeMillisUnsafe(), onExit)
    } catch (cause) {
      onExit(Exit.die(cause))
    }
  }

  const toRecords = (rows: ReadonlyArray<unknown>) =>
    Effect.forEach(rows, (row) => Effect.fromResult(rowToRecord(row, options.filename)))

  // Every subscriber reads a page after every commit: the page queries are prepared once per
  // shape (which filters are set, how many types) on the read connection, not built and
  // prepared per page by the query builder (measured in the sync server: about 3 µs per
  // webhook went to preparing them).
  const pageStatements = new Map<string, Database.Statement<Array<unknown>, unknown>>()
  const pageOf = (from: Offset, filter: PageFilter, limit: number) => {
    const params: Array<unknown> = [from]
    let sql = `SELECT ${PAGE_COLUMNS} FROM records WHERE "offset" >= ?`
    if (filter.tenant !== "all") {
      sql += " AND tenant = ?"
      params.push(filter.tenant)
    }
    if (filter.types !== undefined) {
      sql += filter.types.length === 0 ? " AND 0" : ` AND type IN (${filter.types.map(() => "?").join(", ")})`
      params.push(...filter.types)
    }
    if (filter.untilOffset !== undefined) {
      sql += ` AND "offset" <= ?`
      params.push(filter.untilOffset)
    }
    if (filter.untilReceivedAt !== undefined) {
      sql += " AND received_at <= ?"
      params.push(filter.untilReceivedAt)
    }
    sql += ` ORDER BY "offset" LIMIT ?`
    params.push(limit)
    return db.use("read", (_, client) => {
      let statement = pageStatements.get(sql)
      if (statement === undefined) {
        if (pageStatements.size >= 64) pageStatements.clear()
        statement = client.prepare<Array<unknown>, unknown>(sql)
        pageStatements.set(sql, statement)
      }
      return statement.all(...params)
    }).pipe(Effect.flatMap(toRecords))
  }

  const read = (options: ReadOptions): Stream.Stream<LogRecord, EventLogError> => {
    const pageSize = options.pageSize ?? 500
    return Stream.unwrap(Effect.gen(function*() {
      // A snapshot: records appended after the stream starts are not part of it.
      const head = yield* db.use("read", (orm) => orm.select({ head: max(records.offset) }).from(records).get()?.head ?? 0)
      const filter: PageFilter = {
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
    yield* db.transaction("commit", (orm) => Checkpoints.save(orm, consumer, checkpoint, now))
  })

  const checkpoint = Effect.fn("EventLog.checkpoint")(function*(consumer: string) {
    return yield* db.use("checkpoint", (orm) => Checkpoints.load(orm, consumer))
  })

  /** Waits for the next commit in this process, or the poll interval (other processes). */
  const waitForAppend = (signal: Deferred.Deferred<void>) =>
    Effect.race(Deferred.await(signal), Effect.sleep(pollIntervalMillis))

  const subscribe = (consumer: string, options: SubscribeOptions): Stream.Stream<Delivery, EventLogError> => {
    const pageSize = options.pageSize ?? 500
    const filter: PageFilter = { tenant: options.tenant, types: options.types }
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

  const service: EventLogService = { append, appendUnsafe, read, subscribe, commit, checkpoint }
  return { service, db, nextCommit, pollIntervalMillis, page, killWriter: thread.kill }
})
