/**
 * LogSource: the event log the tool reads, opened read-only.
 *
 * - SQLite (`--log`): the file is opened read-only (no migration, no writer) and queried
 *   directly, page by page (keyset on the offset), so filters the `EventLog` API lacks (source,
 *   time range, `entity_id`) run in SQL and memory stays bounded on any log size.
 *   Reads are a snapshot: records appended after a stream starts are not part of it.
 * - Kafka (`--kafka-brokers --topic`): `KafkaEventLog.layer` over a throwaway outbox file that
 *   never receives an append, so its relay sends nothing; `read` consumes the topic from the
 *   beginning to the end offsets present at start. Filters it lacks run in memory, stream-wise.
 *
 * Both also provide a read-only `EventLog` service, the input of `ReadModels.rebuild`.
 */
import { EventLog, EventLogError, KafkaEventLog, LogRecord, SqliteEventLog } from "@ocs/event-log"
import { SqliteDatabase } from "@ocs/sqlite"
import { Context, Effect, Layer, Option, Result, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { InputFileError, UsageError } from "./ReplayError.ts"

export type ReadError = EventLogError.EventLogError

/** What to read. Every field narrows; none reads the whole log. */
export interface RecordQuery {
  readonly tenant?: LogRecord.TenantKey | undefined
  readonly types?: ReadonlyArray<string> | undefined
  readonly sources?: ReadonlyArray<LogRecord.Source> | undefined
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

export interface LogSourceService {
  /** For messages: the file, or the topic and brokers. */
  readonly description: string
  readonly backend: "sqlite" | "kafka"
  readonly records: (query: RecordQuery) => Stream.Stream<LogRecord.LogRecord, ReadError>
  /** How many records `records(query)` would return now (SQLite); undefined when unknown (Kafka). */
  readonly count: (query: RecordQuery) => Effect.Effect<number | undefined, ReadError>
  /** The open SQLite file (stats and dedupe decisions query it); undefined for Kafka. */
  readonly sqlite: SqliteDatabase.Handle | undefined
  /** A read-only `EventLog` over the same source (appends and checkpoints fail). */
  readonly eventLog: EventLog.EventLogService
}

export class LogSource extends Context.Service<LogSource, LogSourceService>()("@ocs/replay/LogSource") {
  static readonly layer = (options: SourceOptions): Layer.Layer<LogSource, ReadError | InputFileError | UsageError> =>
    Layer.effect(LogSource, make(options))
}

export interface SourceOptions {
  readonly log: string
  readonly kafka?: { readonly brokers: ReadonlyArray<string>; readonly topic: string } | undefined
}

/** A stored row to a LogRecord (the event log's own decoder); a row that does not decode means a damaged file. */
export const rowToRecord = SqliteEventLog.rowToRecord

/** WHERE clause and parameters of a query (without the keyset bound). */
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
  if (query.fromMs !== undefined) {
    parts.push("received_at >= ?")
    params.push(query.fromMs)
  }
  if (query.toMs !== undefined) {
    parts.push("received_at <= ?")
    params.push(query.toMs)
  }
  if (query.mentions !== undefined) {
    parts.push("(entity_id = ? OR (entity_id IS NULL AND instr(body, ?) > 0))")
    params.push(query.mentions, query.mentions)
  }
  return { sql: parts.join(" AND "), params }
}

const makeSqlite = Effect.fnUntraced(function*(filename: string) {
  if (!NodeFs.existsSync(filename)) {
    return yield* new InputFileError({
      filename,
      message: `event log not found: ${filename} (give --log path/to/events.sqlite, set OCS_DATA_DIR, or read Kafka with --kafka-brokers and --topic)`
    })
  }
  const db = yield* SqliteDatabase.make({ filename, readonly: true, synchronous: "NORMAL" })
  const isLog = yield* db.use("inspect", (_, client) =>
    client.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'records'").get() !== undefined)
  if (!isLog) {
    return yield* new InputFileError({ filename, message: `${filename} is not an event-log file (it has no records table)` })
  }
  const head = db.use("head", (_, client) =>
    (client.prepare(`SELECT COALESCE(MAX("offset"), 0) AS head FROM records`).get() as { head: number }).head)

  const records = (query: RecordQuery): Stream.Stream<LogRecord.LogRecord, ReadError> =>
    Stream.unwrap(Effect.gen(function*() {
      const upper = Math.min(yield* head, query.untilOffset ?? Number.MAX_SAFE_INTEGER)
      const pageSize = query.pageSize ?? 1000
      const where = whereOf(query, upper)
      const statement = yield* db.use("prepare", (_, client) =>
        client.prepare(`SELECT ${SqliteEventLog.recordColumns} FROM records WHERE "offset" > ? AND ${where.sql} ORDER BY "offset" LIMIT ?`))
      return Stream.paginate(0, (cursor: number) =>
        db.use("read", () => statement.all(cursor, ...where.params, pageSize)).pipe(
          Effect.flatMap((rows) => {
            // A plain loop: this is the hot path of a replay (one page = one batch of the rebuild).
            const page: Array<LogRecord.LogRecord> = []
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
      const upper = Math.min(yield* head, query.untilOffset ?? Number.MAX_SAFE_INTEGER)
      const where = whereOf(query, upper)
      return yield* db.use("count", (_, client) =>
        (client.prepare(`SELECT COUNT(*) AS n FROM records WHERE ${where.sql}`).get(...where.params) as { n: number }).n)
    })

  return { description: filename, backend: "sqlite" as const, records, count, sqlite: db }
})

const makeKafka = Effect.fnUntraced(function*(kafka: NonNullable<SourceOptions["kafka"]>) {
  // The Kafka layer needs an outbox: a throwaway one, never appended to, so nothing is sent.
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "ocs-replay-outbox-"))),
    (dir) => Effect.sync(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
  )
  const context = yield* Layer.build(KafkaEventLog.layer({
    brokers: kafka.brokers,
    topic: kafka.topic,
    outboxFilename: NodePath.join(dir, "outbox.sqlite"),
    clientId: "ocs-replay",
    synchronous: "NORMAL"
  }))
  const log = Context.get(context, EventLog.EventLog)
  const records = (query: RecordQuery): Stream.Stream<LogRecord.LogRecord, ReadError> => {
    const sources = query.sources !== undefined && query.sources.length > 0 ? new Set(query.sources) : undefined
    const mentions = query.mentions
    return log.read({
      tenant: query.tenant ?? "all",
      types: query.types !== undefined && query.types.length > 0 ? query.types : undefined,
      untilOffset: query.untilOffset,
      untilReceivedAt: query.toMs,
      pageSize: query.pageSize
    }).pipe(Stream.filter((r) =>
      (sources === undefined || sources.has(r.source)) &&
      (query.fromMs === undefined || r.receivedAt >= query.fromMs) &&
      (mentions === undefined || r.entityId === mentions || (r.entityId === null && r.body.includes(mentions)))
    ))
  }
  return {
    description: `Kafka topic ${kafka.topic} at ${kafka.brokers.join(",")}`,
    backend: "kafka" as const,
    records,
    count: () => Effect.succeed(undefined),
    sqlite: undefined
  }
})

const readOnly = (what: string) =>
  Effect.fail(new EventLogError.EventLogClosed({ message: `the replay tool opens the event log read-only (${what})` }))

export const make = Effect.fnUntraced(function*(options: SourceOptions) {
  const base = options.kafka === undefined ? yield* makeSqlite(options.log) : yield* makeKafka(options.kafka)
  const eventLog: EventLog.EventLogService = {
    read: (o) =>
      base.records({
        tenant: o.tenant === "all" ? undefined : o.tenant,
        types: o.types,
        untilOffset: o.untilOffset,
        toMs: o.untilReceivedAt,
        pageSize: o.pageSize
      }).pipe((records) => (o.from === undefined ? records : Stream.filter(records, (r) => r.offset >= o.from!))),
    append: () => readOnly("append"),
    subscribe: () => Stream.fromEffect(readOnly("subscribe")),
    commit: () => readOnly("commit"),
    checkpoint: () => readOnly("checkpoint")
  }
  return { ...base, eventLog } satisfies LogSourceService
})

/** Resolves the source flags: Kafka when --kafka-brokers is given, else the SQLite file. */
export const optionsFromFlags = (flags: {
  readonly log: Option.Option<string>
  readonly kafkaBrokers: Option.Option<string>
  readonly topic: Option.Option<string>
}, defaultLog: string): Result.Result<SourceOptions, UsageError> => {
  if (Option.isSome(flags.kafkaBrokers)) {
    if (Option.isSome(flags.log)) return Result.fail(new UsageError({ message: "give either --log or --kafka-brokers, not both" }))
    if (Option.isNone(flags.topic)) return Result.fail(new UsageError({ message: "--kafka-brokers needs --topic (the event log's topic)" }))
    const brokers = flags.kafkaBrokers.value.split(",").map((b) => b.trim()).filter((b) => b.length > 0)
    if (brokers.length === 0 || brokers.some((b) => !/^[^:\s]+:[0-9]+$/.test(b))) {
      return Result.fail(new UsageError({ message: `--kafka-brokers "${flags.kafkaBrokers.value}": use host:port[,host:port...]` }))
    }
    return Result.succeed({ log: "", kafka: { brokers, topic: flags.topic.value } })
  }
  if (Option.isSome(flags.topic)) return Result.fail(new UsageError({ message: "--topic needs --kafka-brokers" }))
  return Result.succeed({ log: Option.getOrElse(flags.log, () => defaultLog) })
}
