/**
 * The SQLite event log engine. Public surface: ../SqliteEventLog.ts. The Kafka log reuses it
 * as its outbox (the outbox is an event-log file plus a relay cursor).
 */
import * as Json from "@ocs/protocol/Json"
import type Database from "better-sqlite3"
import { and, asc, gte, inArray, lte, max, eq, type SQL } from "drizzle-orm"
import { Clock, Deferred, Effect, Option, Queue, Result, Schema, type Scope, Stream } from "effect"
import * as NodeUrl from "node:url"
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
  type LogRecord,
  NewRecord,
  type Offset,
  type ReadOptions,
  Source,
  type SubscribeOptions,
  tenantKey,
  uuidv7
} from "../LogRecord.ts"
import * as SqliteDatabase from "../SqliteDatabase.ts"
import { records } from "../Tables.ts"

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

interface Prepared {
  readonly id: string
  readonly idGiven: boolean
  readonly tenant: string
  readonly appId: string
  readonly businessId: string | null
  readonly source: string
  readonly type: string
  readonly receivedAt: number
  readonly body: string
  readonly dedupeKey: string | null
  readonly meta: string
  readonly entityId: string | null
}

interface Pending {
  readonly rows: ReadonlyArray<Prepared>
  readonly deferred: Deferred.Deferred<ReadonlyArray<AppendResult>, EventLogError>
}

const decodeNewRecord = Schema.decodeUnknownExit(NewRecord)

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
  tenant: Schema.String,
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
const decodeRow = Schema.decodeUnknownExit(RecordRow)

/** Decodes a stored row (or the same shape from a Kafka message) into a LogRecord. */
export const rowToRecord = (row: unknown, where: string): Result.Result<LogRecord, RecordDecodeError> => {
  const exit = decodeRow(row)
  if (exit._tag === "Failure") {
    return Result.fail(new RecordDecodeError({ where, message: `stored record does not decode: ${String(exit.cause)}` }))
  }
  const r = exit.value
  const meta = Json.parse(r.meta)
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

export interface Core {
  readonly service: EventLogService
  readonly db: SqliteDatabase.Handle
  /** Completes at the next commit (or never): subscribers and the relay wait on it. */
  readonly nextCommit: () => Deferred.Deferred<void>
  readonly pollIntervalMillis: number
  /** One page of records with offset >= from, in order, all tenants. */
  readonly page: (from: Offset, limit: number) => Effect.Effect<ReadonlyArray<LogRecord>, EventLogError>
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

  // Hot path: raw prepared statements (drizzle builds the schema and the read queries).
  const statements = yield* db.use("prepare", (_, client) => ({
    insert: client.prepare(
      `INSERT INTO records (id, tenant, app_id, business_id, source, type, received_at, body, dedupe_key, meta, entity_id)
       VALUES (@id, @tenant, @appId, @businessId, @source, @type, @receivedAt, @body, @dedupeKey, @meta, @entityId)`
    ),
    byDedupeKey: client.prepare<[string, string, number], { offset: number; id: string }>(
      `SELECT "offset", id FROM records WHERE tenant = ? AND dedupe_key = ? AND received_at >= ? ORDER BY "offset" LIMIT 1`
    ),
    byId: client.prepare<[string], { offset: number; id: string }>(`SELECT "offset", id FROM records WHERE id = ?`),
    decision: client.prepare(
      `INSERT INTO dedupe_decisions (decided_at, tenant, reason, dedupe_key, original_offset, id, type, source, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
    ),
    commit: client.prepare(`INSERT INTO commits (committed_at, requests, appended, duplicates) VALUES (?, ?, ?, ?)`)
  }))

  /** One transaction for a whole group; returns one result list per pending request. */
  const writeGroup = (client: Database.Database, group: ReadonlyArray<Pending>, now: number) =>
    client.transaction(() => {
      let appended = 0
      let duplicates = 0
      const out = group.map((pending) =>
        pending.rows.map((row): AppendResult => {
          const byId = row.idGiven ? statements.byId.get(row.id) : undefined
          const original = byId ??
            (row.dedupeKey === null ? undefined : statements.byDedupeKey.get(row.tenant, row.dedupeKey, row.receivedAt - dedupeWindow))
          if (original !== undefined) {
            duplicates++
            statements.decision.run(
              now, row.tenant, byId === undefined ? "dedupeKey" : "id", row.dedupeKey, original.offset, row.id, row.type, row.source, row.receivedAt
            )
            return { _tag: "Duplicate", offset: original.offset, id: original.id }
          }
          appended++
          const info = statements.insert.run(row)
          return { _tag: "Appended", offset: Number(info.lastInsertRowid), id: row.id }
        })
      )
      statements.commit.run(now, group.length, appended, duplicates)
      return out
    }).immediate()

  let signal = Deferred.makeUnsafe<void>()
  const nextCommit = () => signal
  const notify = () => {
    const previous = signal
    signal = Deferred.makeUnsafe<void>()
    Deferred.doneUnsafe(previous, Effect.void)
  }

  const queue = yield* Queue.unbounded<Pending>()

  const commitGroup = Effect.fnUntraced(function*(group: ReadonlyArray<Pending>) {
    const now = yield* Clock.currentTimeMillis
    const whole = yield* db.use("append", (_, client) => writeGroup(client, group, now)).pipe(Effect.result)
    if (Result.isSuccess(whole)) {
      group.forEach((pending, i) => Deferred.doneUnsafe(pending.deferred, Effect.succeed(whole.success[i]!)))
    } else {
      // One bad request must not fail its neighbours: retry each alone.
      for (const pending of group) {
        const alone = yield* db.use("append", (_, client) => writeGroup(client, [pending], now)).pipe(Effect.result)
        Deferred.doneUnsafe(
          pending.deferred,
          Result.isSuccess(alone) ? Effect.succeed(alone.success[0]!) : Effect.fail(alone.failure)
        )
      }
    }
    notify()
  })

  // The group-commit writer: takes whatever is queued, commits it in one transaction, repeats.
  const writer = Effect.gen(function*() {
    const first = yield* Queue.take(queue)
    yield* Effect.uninterruptible(Effect.gen(function*() {
      if (commitWindow > 0) yield* Effect.sleep(commitWindow)
      else yield* Effect.yieldNow
      const group: Array<Pending> = [first]
      let count = first.rows.length
      while (count < maxPerCommit) {
        const next = yield* Queue.poll(queue)
        if (Option.isNone(next)) break
        group.push(next.value)
        count += next.value.rows.length
      }
      yield* commitGroup(group)
    }))
  }).pipe(Effect.forever)

  yield* Effect.acquireRelease(
    Effect.forkScoped(writer),
    () =>
      Effect.gen(function*() {
        const left = yield* Queue.clear(queue)
        for (const pending of left) {
          Deferred.doneUnsafe(pending.deferred, Effect.fail(new EventLogClosed({ message: `event log ${options.filename} closed before the append was written` })))
        }
      })
  )

  const append = Effect.fn("EventLog.append")(function*(batch: ReadonlyArray<NewRecord>) {
    if (batch.length === 0) return []
    const now = yield* Clock.currentTimeMillis
    const rows: Array<Prepared> = []
    for (let i = 0; i < batch.length; i++) {
      const exit = decodeNewRecord(batch[i])
      if (exit._tag === "Failure") {
        return yield* new InvalidRecord({ index: i, message: `record ${i}: ${String(exit.cause)}` })
      }
      const r = exit.value
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
        meta: Json.stringify(r.meta ?? {}),
        entityId: entityIdOf(r)
      })
    }
    const deferred = yield* Deferred.make<ReadonlyArray<AppendResult>, EventLogError>()
    yield* Queue.offer(queue, { rows, deferred })
    return yield* Deferred.await(deferred)
  })

  const toRecords = (rows: ReadonlyArray<unknown>) =>
    Effect.forEach(rows, (row) => Effect.fromResult(rowToRecord(row, options.filename)))

  const pageWhere = (conditions: ReadonlyArray<SQL | undefined>, limit: number) =>
    db.use("read", (orm) =>
      orm.select().from(records).where(and(...conditions)).orderBy(asc(records.offset)).limit(limit).all()
    ).pipe(Effect.flatMap(toRecords))

  const filters = (options: { readonly tenant: string; readonly types?: ReadonlyArray<string> | undefined }) => [
    options.tenant === "all" ? undefined : eq(records.tenant, options.tenant),
    options.types === undefined ? undefined : inArray(records.type, [...options.types])
  ]

  const read = (options: ReadOptions): Stream.Stream<LogRecord, EventLogError> => {
    const pageSize = options.pageSize ?? 500
    return Stream.unwrap(Effect.gen(function*() {
      // A snapshot: records appended after the stream starts are not part of it.
      const head = yield* db.use("read", (orm) => orm.select({ head: max(records.offset) }).from(records).get()?.head ?? 0)
      const upper = Math.min(head, options.untilOffset ?? Number.MAX_SAFE_INTEGER)
      const fixed = [
        ...filters(options),
        lte(records.offset, upper),
        options.untilReceivedAt === undefined ? undefined : lte(records.receivedAt, options.untilReceivedAt)
      ]
      return Stream.paginate(options.from ?? 0, (from: Offset) =>
        pageWhere([gte(records.offset, from), ...fixed], pageSize).pipe(
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
    const fixed = filters(options)
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
          const page = yield* pageWhere([gte(records.offset, cursor), ...fixed], pageSize)
          if (page.length === 0) {
            yield* waitForAppend(wake)
            return [[], Option.some(cursor)] as const
          }
          const deliveries = page.map((record): Delivery => ({ record, checkpoint: Checkpoints.sqlite(record.offset) }))
          return [deliveries, Option.some(page[page.length - 1]!.offset + 1)] as const
        }))
    }))
  }

  const page = (from: Offset, limit: number) => pageWhere([gte(records.offset, from)], limit)

  const service: EventLogService = { append, read, subscribe, commit, checkpoint }
  return { service, db, nextCommit, pollIntervalMillis, page }
})
