/**
 * LogFile: an event-log file (or a Kafka outbox) opened read-only on a connection of its own,
 * for tools and monitors beside the writer: the replay tool, the server's lag gauges, a drain
 * of a stopped server's outbox. No migration runs and no writer starts; WAL readers never wait
 * on the writer, so a stalled append cannot stall a reader here.
 *
 * It answers what the `EventLog` port does not: records filtered by source, time range or
 * entity in SQL, counts, aggregate statistics, and the relay cursor a file keeps. Reads are
 * snapshots bounded by the head at their start, page by page (keyset on the offset).
 */
import { Clock, Effect, Option, Result, type Scope, Stream } from "effect"
import { SqliteDatabase } from "@ocs/sqlite"
import { NotAnEventLogFile, type RecordDecodeError, type SqliteError } from "./EventLogError.ts"
import * as Queries from "./internal/logQueries.ts"
import { recordColumns, rowToRecord } from "./internal/recordRow.ts"
import type { Lag, LogRecord, Offset, Source, TenantFilter, TenantKey } from "./LogRecord.ts"

/** What to read. Every field narrows; none reads the whole log. */
export interface RecordQuery {
  readonly tenant?: TenantKey | undefined
  readonly types?: ReadonlyArray<string> | undefined
  readonly sources?: ReadonlyArray<Source> | undefined
  /** received_at >= fromMs */
  readonly fromMs?: number | undefined
  /** received_at <= toMs */
  readonly toMs?: number | undefined
  readonly untilOffset?: number | undefined
  /**
   * Pre-filter of entity lookups: records whose `entity_id` is this id, or that have none and
   * mention it in their body (a sync page, a webhook without entityId). Callers decode to confirm.
   */
  readonly mentions?: string | undefined
  readonly pageSize?: number | undefined
}

export interface StatsQuery {
  readonly tenant?: TenantKey | undefined
  readonly fromMs?: number | undefined
  readonly toMs?: number | undefined
  /** A system record type whose records are also counted per tenant and the body's `operation`. */
  readonly operationsOf?: string | undefined
}

export interface Stats {
  readonly byTenant: ReadonlyArray<{ readonly tenant: string; readonly records: number; readonly first: number; readonly last: number }>
  readonly byType: ReadonlyArray<{ readonly source: string; readonly type: string; readonly records: number }>
  /** Days in UTC, `YYYY-MM-DD`. */
  readonly byDay: ReadonlyArray<{ readonly day: string; readonly records: number }>
  /** Appends refused as duplicates; undefined for a file without the audit table. */
  readonly duplicates: ReadonlyArray<{ readonly tenant: string; readonly type: string; readonly reason: string; readonly count: number }> | undefined
  /** Records of `operationsOf`, per tenant and operation (empty when not asked). */
  readonly operations: ReadonlyArray<{ readonly tenant: string; readonly operation: string; readonly count: number; readonly last: number }>
}

export interface LogFileService {
  readonly filename: string
  /** The last offset now (0 when empty), of the whole file or of one tenant. */
  readonly head: (tenant?: TenantFilter) => Effect.Effect<Offset, SqliteError>
  /** How far a reader that handled everything up to `after` is behind. */
  readonly lagAfter: (after: Offset, tenant?: TenantFilter) => Effect.Effect<Lag, SqliteError>
  /** Kafka outbox: the records not acknowledged by the broker yet, by the cursor saved for `topic`. */
  readonly relayBacklog: (topic: string) => Effect.Effect<Lag, SqliteError>
  readonly records: (query: RecordQuery) => Stream.Stream<LogRecord, SqliteError | RecordDecodeError>
  /** How many records `records(query)` would return now. */
  readonly count: (query: RecordQuery) => Effect.Effect<number, SqliteError>
  readonly stats: (query: StatsQuery) => Effect.Effect<Stats, SqliteError>
}

/** The terms of a `received_at` range (inclusive), when the query has one. */
const receivedWithin = (query: { readonly fromMs?: number | undefined; readonly toMs?: number | undefined }, parts: Array<string>, params: Array<unknown>) => {
  if (query.fromMs !== undefined) {
    parts.push("received_at >= ?")
    params.push(query.fromMs)
  }
  if (query.toMs !== undefined) {
    parts.push("received_at <= ?")
    params.push(query.toMs)
  }
}

/** WHERE clause and parameters of a record query (without the keyset bound). */
const whereOf = (query: RecordQuery, upper: number): { readonly sql: string; readonly params: Array<unknown> } => {
  const parts: Array<string> = [`"offset" <= ?`]
  const params: Array<unknown> = [upper]
  if (query.tenant !== undefined) {
    parts.push("tenant = ?")
    params.push(query.tenant)
  }
  if (query.types !== undefined && query.types.length > 0) {
    parts.push(`type IN (${query.types.map(() => "?").join(", ")})`)
    params.push(...query.types)
  }
  if (query.sources !== undefined && query.sources.length > 0) {
    parts.push(`source IN (${query.sources.map(() => "?").join(", ")})`)
    params.push(...query.sources)
  }
  receivedWithin(query, parts, params)
  if (query.mentions !== undefined) {
    parts.push("(entity_id = ? OR (entity_id IS NULL AND instr(body, ?) > 0))")
    params.push(query.mentions, query.mentions)
  }
  return { sql: parts.join(" AND "), params }
}

/**
 * WHERE clause of an aggregate. `timeFirst`: the table has the (received_at, tenant) index and
 * the query has a time range. The tenant term is then written `+tenant`, so that SQLite scans
 * the range in that index (checking the tenant there) instead of every record of the tenant by
 * its (tenant, offset) index: without statistics the planner prefers the tenant's equality.
 */
const statsWhere = (query: StatsQuery, timeFirst: boolean) => {
  const parts: Array<string> = ["1 = 1"]
  const params: Array<unknown> = []
  if (query.tenant !== undefined) {
    const ranged = query.fromMs !== undefined || query.toMs !== undefined
    parts.push(timeFirst && ranged ? "+tenant = ?" : "tenant = ?")
    params.push(query.tenant)
  }
  receivedWithin(query, parts, params)
  return { sql: parts.join(" AND "), params }
}

/** Opens `filename` read-only in the current scope; fails if it is not an event-log file. */
export const open = Effect.fnUntraced(function*(
  filename: string,
  options?: { readonly busyTimeoutMillis?: number | undefined }
): Effect.fn.Return<LogFileService, SqliteError | NotAnEventLogFile, Scope.Scope> {
  const db = yield* SqliteDatabase.make({ filename, readonly: true, synchronous: "NORMAL", busyTimeoutMillis: options?.busyTimeoutMillis })
  if (!(yield* db.use("inspect", (_, client) => Queries.hasTable(client, "records")))) {
    return yield* new NotAnEventLogFile({ filename, message: `${filename} is not an event-log file (it has no records table)` })
  }
  const head = (tenant?: TenantFilter) => db.use("head", (_, client) => Queries.head(client, tenant))
  const lagAfter = (after: Offset, tenant?: TenantFilter) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => db.use("lag", (_, client) => Queries.lagAfter(client, after, now, tenant)))
  const relayBacklog = (topic: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      db.use("relay backlog", (_, client) => Queries.lagAfter(client, Queries.relayedOffset(client, topic), now)))

  const records = (query: RecordQuery): Stream.Stream<LogRecord, SqliteError | RecordDecodeError> =>
    Stream.unwrap(Effect.gen(function*() {
      const upper = Math.min(yield* head(), query.untilOffset ?? Number.MAX_SAFE_INTEGER)
      const pageSize = query.pageSize ?? 1000
      const where = whereOf(query, upper)
      const statement = yield* db.use("prepare", (_, client) =>
        client.prepare(`SELECT ${recordColumns} FROM records WHERE "offset" > ? AND ${where.sql} ORDER BY "offset" LIMIT ?`))
      return Stream.paginate(0, (cursor: number) =>
        db.use("read", () => statement.all(cursor, ...where.params, pageSize)).pipe(
          Effect.flatMap((rows) => {
            // A plain loop: this is the hot path of a replay (one page = one batch of the rebuild).
            const page: Array<LogRecord> = []
            for (const row of rows) {
              const decoded = rowToRecord(row, filename)
              if (Result.isFailure(decoded)) return Effect.fail(decoded.failure)
              page.push(decoded.success)
            }
            const next = page.length === pageSize ? Option.some(page[page.length - 1]!.offset) : Option.none<number>()
            return Effect.succeed([page, next] as const)
          })
        ))
    }))

  const count = (query: RecordQuery) =>
    Effect.gen(function*() {
      const where = whereOf(query, Math.min(yield* head(), query.untilOffset ?? Number.MAX_SAFE_INTEGER))
      return yield* db.use("count", (_, client) =>
        (client.prepare(`SELECT COUNT(*) AS n FROM records WHERE ${where.sql}`).get(...where.params) as { n: number }).n)
    })

  const stats = (query: StatsQuery) =>
    db.use("stats", (_, client): Stats => {
      // Files from before the event log's migration 0002 (opened read-only, never migrated here) lack it.
      const w = statsWhere(query, Queries.hasIndex(client, "records_received_tenant"))
      const all = <A>(sql: string, params: ReadonlyArray<unknown> = w.params) => client.prepare(sql).all(...params) as Array<A>
      const d = statsWhere(query, false)
      return {
        byTenant: all(
          `SELECT tenant, COUNT(*) AS records, MIN(received_at) AS first, MAX(received_at) AS last FROM records WHERE ${w.sql} GROUP BY tenant ORDER BY tenant`
        ),
        byType: all(`SELECT source, type, COUNT(*) AS records FROM records WHERE ${w.sql} GROUP BY source, type ORDER BY records DESC, source, type`),
        byDay: all(
          `SELECT strftime('%Y-%m-%d', received_at / 1000, 'unixepoch') AS day, COUNT(*) AS records FROM records WHERE ${w.sql} GROUP BY day ORDER BY day`
        ),
        duplicates: Queries.hasTable(client, "dedupe_decisions")
          ? all(
            `SELECT tenant, type, reason, COUNT(*) AS count FROM dedupe_decisions WHERE ${d.sql} GROUP BY tenant, type, reason ORDER BY count DESC, tenant, type`,
            d.params
          )
          : undefined,
        operations: query.operationsOf === undefined ? [] : all(
          `SELECT tenant, COALESCE(CASE WHEN json_valid(body) THEN json_extract(body, '$.operation') END, '') AS operation,
            COUNT(*) AS count, MAX(received_at) AS last FROM records
            WHERE source = 'system' AND type = ? AND ${w.sql} GROUP BY tenant, operation ORDER BY count DESC, tenant`,
          [query.operationsOf, ...w.params]
        )
      }
    })

  return { filename, head, lagAfter, relayBacklog, records, count, stats } satisfies LogFileService
})
