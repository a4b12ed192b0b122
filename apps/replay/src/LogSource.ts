/**
 * LogSource: the event log the tool reads, opened read-only.
 *
 * - SQLite (`--log`): the event log's `LogFile`, opened read-only (no migration, no writer) and
 *   read page by page (keyset on the offset), so filters the `EventLog` API lacks (source,
 *   time range, `entity_id`) run in SQL and memory stays bounded on any log size.
 *   Reads are a snapshot: records appended after a stream starts are not part of it.
 * - Kafka (`--kafka-brokers --topic`): `KafkaEventLog.layer` over a throwaway outbox file that
 *   never receives an append, so its relay sends nothing; `read` consumes the topic from the
 *   beginning to the end offsets present at start. Filters it lacks run in memory, stream-wise.
 *
 * Both also provide a read-only `EventLog` service, the input of `ReadModels.rebuild`.
 */
import { Checkpoints, EventLog, EventLogError, KafkaEventLog, LogFile, LogRecord } from "@ocs/event-log"
import { Context, Effect, Layer, Option, Result, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { InputFileError, UsageError } from "./ReplayError.ts"

export type ReadError = EventLogError.EventLogError

/** What to read. Every field narrows; none reads the whole log. */
export type RecordQuery = LogFile.RecordQuery

export interface LogSourceService {
  /** For messages: the file, or the topic and brokers. */
  readonly description: string
  readonly backend: "sqlite" | "kafka"
  readonly records: (query: RecordQuery) => Stream.Stream<LogRecord.LogRecord, ReadError>
  /** How many records `records(query)` would return now (SQLite); undefined when unknown (Kafka). */
  readonly count: (query: RecordQuery) => Effect.Effect<number | undefined, ReadError>
  /** The SQLite file, read-only (stats and dedupe decisions come from it); undefined for Kafka. */
  readonly file: LogFile.LogFileService | undefined
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

const makeSqlite = Effect.fnUntraced(function*(filename: string) {
  if (!NodeFs.existsSync(filename)) {
    return yield* new InputFileError({
      filename,
      message: `event log not found: ${filename} (give --log path/to/events.sqlite, set OCS_DATA_DIR, or read Kafka with --kafka-brokers and --topic)`
    })
  }
  const file = yield* LogFile.open(filename).pipe(
    Effect.catchTag("NotAnEventLogFile", (e) => Effect.fail(new InputFileError({ filename, message: e.message })))
  )
  return { description: filename, backend: "sqlite" as const, records: file.records, count: file.count, file }
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
    file: undefined
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
    checkpoint: () => readOnly("checkpoint"),
    head: (tenant) => base.file === undefined ? readOnly("the head of a topic") : base.file.head(tenant),
    lag: (checkpoint, tenant) => {
      const after = Checkpoints.parseSqlite(checkpoint)
      return base.file === undefined || after === undefined
        ? Effect.succeed(Option.none())
        : Effect.map(base.file.lagAfter(after, tenant), Option.some)
    },
    // Nothing is relayed from here: the Kafka source's outbox never receives an append.
    relayBacklog: Effect.succeed(Option.none())
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
