/**
 * How far the read models are behind the log: in records (the log's last offset minus the
 * projection's checkpoint) and in seconds (the age of the oldest record not projected yet).
 * `/metrics` shows both; `/readyz` turns 503 past the configured bounds.
 *
 * The log file is read through `LogFile`, on a read-only connection of its own: WAL readers
 * never wait on the writer, so a stalled append cannot stall this. Over Kafka the projection's
 * checkpoint is a topic position, not a file offset: the lag is then unknown (absent from
 * /metrics).
 */
import { Effect, Option } from "effect"
import { Checkpoints, LogFile, type LogRecord } from "@ocs/event-log"
import type { ReadModels } from "@ocs/read-models"

export type Lag = LogRecord.Lag

export interface ProjectionLagService {
  /** None when it cannot be known (Kafka checkpoints, a file that cannot be read). */
  readonly lag: Effect.Effect<Option.Option<Lag>>
  /** The log file's last offset (0 when empty); None when the file cannot be read. */
  readonly head: Effect.Effect<Option.Option<number>>
  /** The same measure for a reader that has handled the log up to `offset` (a plugin). */
  readonly lagAfter: (offset: number) => Effect.Effect<Option.Option<Lag>>
  /**
   * Kafka mode: the outbox records not relayed to the topic yet (acknowledged webhooks and
   * pulled pages only this server's disk holds), from the relay cursor saved in the outbox
   * (at most about a second behind the relay). None in SQLite mode.
   */
  readonly relayBacklog: Effect.Effect<Option.Option<Lag>>
}

export const make = Effect.fnUntraced(function*(options: {
  readonly logFilename: string
  /** Absent for a reader of the relay backlog only (`--drain-outbox`): `lag` is then None. */
  readonly readModels?: ReadModels.ReadModelsService | undefined
  readonly consumer: string
  /** Kafka mode: the topic whose relay cursor the outbox keeps. */
  readonly relayTopic?: string | undefined
}) {
  const file = yield* LogFile.open(options.logFilename, { busyTimeoutMillis: 0 }).pipe(Effect.option)
  const lagAfter = (projected: number): Effect.Effect<Option.Option<Lag>> =>
    Option.isNone(file)
      ? Effect.succeed(Option.none())
      : file.value.lagAfter(projected).pipe(Effect.map(Option.some), Effect.orElseSucceed(() => Option.none<Lag>()))
  const lag: Effect.Effect<Option.Option<Lag>> = Effect.gen(function*() {
    if (Option.isNone(file) || options.readModels === undefined) return Option.none()
    const stored = yield* options.readModels.checkpoint(options.consumer)
    const projected = Option.isSome(stored) ? Checkpoints.parseSqlite(stored.value) : 0
    if (projected === undefined) return Option.none()
    return yield* lagAfter(projected)
  }).pipe(Effect.orElseSucceed(() => Option.none()))
  const head: Effect.Effect<Option.Option<number>> = Option.isNone(file)
    ? Effect.succeed(Option.none())
    : file.value.head().pipe(Effect.map(Option.some), Effect.orElseSucceed(() => Option.none<number>()))
  const relayTopic = options.relayTopic
  const relayBacklog: Effect.Effect<Option.Option<Lag>> = Option.isNone(file) || relayTopic === undefined
    ? Effect.succeed(Option.none())
    : file.value.relayBacklog(relayTopic).pipe(Effect.map(Option.some), Effect.orElseSucceed(() => Option.none<Lag>()))
  return { lag, lagAfter, head, relayBacklog } satisfies ProjectionLagService
})
