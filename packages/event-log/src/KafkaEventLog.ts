/**
 * KafkaEventLog: the event log on a Kafka topic, fed through a local SQLite outbox.
 *
 * - `append` commits to the outbox (an event-log file: group commit, dedupe, fsync) and
 *   returns; a Kafka outage therefore never loses or refuses an append.
 * - A relay fiber moves outbox records to the topic in outbox order, one `send` per batch,
 *   with an idempotent producer (`maxInFlightRequests: 1`, acks = all), message key
 *   `appId:businessId` so each business stays in one partition, in order. The outbox cursor
 *   (`relay_state`) advances only after the broker acknowledged; while the broker is down the
 *   relay retries with exponential backoff.
 * - Several servers may relay into one topic (docs/architecture.md §4.18). Each outbox file has
 *   an origin id of its own (made once, kept in the file); every message carries it in its
 *   value, beside the stored row (whose `offset` is the outbox offset), and the record id
 *   (also as header `ocs-record-id`). Records are delivered with `offset` = `topicPosition(partition, offset)`,
 *   unique across servers, so a consumer keying what it applied by offset never mistakes one
 *   server's record for another's; `LogRecord.kafka` keeps the partition, Kafka offset, origin
 *   and outbox offset.
 * - Each request is bounded by bytes (internal/relaySizing.ts) below the topic's
 *   `max.message.bytes` as the broker tells it (configurable: `maxRequestBytes`). A record larger
 *   than that alone is not sent (the broker would refuse it, and every record behind it would
 *   wait): it is noted as a relay dead letter in the outbox file and logged (`RecordTooLarge`);
 *   it stays in the outbox, and `RelayProgress.redrive` puts it on the topic once the limit allows.
 * - A crash between the broker's ack and the cursor update sends a batch again. One origin's
 *   messages reach a partition in outbox order, so a message whose outbox offset is at or below
 *   the highest one delivered from its origin in that partition is a repeat and is dropped; the
 *   high-water marks travel in the checkpoint, so this holds across restarts too.
 * - `read` reads the topic from the beginning up to the end offsets present when it starts.
 *   `subscribe` resumes from a checkpoint (`Checkpoints`: per partition the next offset to
 *   consume, Kafka's convention, and the origins' high-water marks) and follows the topic.
 *   Order holds per business (per partition), not across businesses.
 *
 * `layer(options)` provides `EventLog`, `DirectAppend` (appends from plain callbacks, which
 * go to the outbox as `append` does) and `RelayProgress` (how far the relay has got).
 *
 * The parts live in internal/: the client and topic (kafkaClient.ts), the messages and their
 * repeats (kafkaMessages.ts), the relay (kafkaRelay.ts), the readers (kafkaTopicReader.ts).
 * kafkajs is used by this package only, so a KafkaJS-compatible client can replace it there.
 */
import { Clock, Context, Effect, Layer, Option, type Scope } from "effect"
import * as Checkpoints from "./Checkpoints.ts"
import { DirectAppend, type DirectAppendService } from "./DirectAppend.ts"
import { EventLog, type EventLogService } from "./EventLog.ts"
import { type EventLogError, InvalidCheckpoint, type KafkaUnavailable, type SqliteError } from "./EventLogError.ts"
import * as KafkaClient from "./internal/kafkaClient.ts"
import { ORIGIN_ROW } from "./internal/kafkaMessages.ts"
import type { Options } from "./internal/kafkaOptions.ts"
import * as Relay from "./internal/kafkaRelay.ts"
import type { RelayStatus } from "./internal/kafkaRelay.ts"
import * as TopicReader from "./internal/kafkaTopicReader.ts"
import type { DeadLetter } from "./internal/relayDeadLetters.ts"
import * as Queries from "./internal/logQueries.ts"
import * as Core from "./internal/sqliteLog.ts"
import { type Checkpoint, type Lag, uuidv7 } from "./LogRecord.ts"

export type { Options, Supervise } from "./internal/kafkaOptions.ts"
export type { DeadLetter, RelayStatus }

/**
 * How far the relay has moved the outbox to the topic. A record appended to the outbox is on
 * this server's disk only until the relay sends it; state that other servers act on and that
 * presumes such a record is on the topic (a shared sync cursor past the page it was read
 * from) is published only once `relayed` reaches the `head` seen after that record's append.
 */
export interface RelayProgressService {
  /** The outbox's last offset now (0 when empty): every record committed so far is at or below it. */
  readonly head: Effect.Effect<number, SqliteError>
  /** Every outbox record at or below this offset is acknowledged by the broker (or set aside as a dead letter). */
  readonly relayed: Effect.Effect<number>
  /** Whether the relay gets its requests acknowledged, the limit it sizes them by, its dead letters. */
  readonly status: Effect.Effect<RelayStatus>
  /** The records set aside for their size and not redriven yet, in outbox order. */
  readonly deadLetters: Effect.Effect<ReadonlyArray<DeadLetter>, SqliteError>
  /**
   * Reads the topic's limit again and puts on the topic every waiting dead letter that now fits
   * (after an operator raised `max.message.bytes`). The others keep waiting.
   */
  readonly redrive: Effect.Effect<{ readonly redriven: number; readonly stillTooLarge: number }, EventLogError>
}

export class RelayProgress extends Context.Service<RelayProgress, RelayProgressService>()("@ocs/event-log/RelayProgress") {}

/** The log, its direct appends and the relay's progress, in the current scope. */
export interface Made {
  readonly service: EventLogService
  readonly direct: DirectAppendService
  readonly progress: RelayProgressService
}

export const make = Effect.fnUntraced(function*(
  options: Options
): Effect.fn.Return<Made, SqliteError | KafkaUnavailable, Scope.Scope> {
  const outbox = yield* Core.make({
    filename: options.outboxFilename,
    synchronous: options.synchronous,
    dedupeWindowMillis: options.dedupeWindowMillis,
    commitWindowMillis: options.commitWindowMillis
  })
  // The outbox's origin id: made once and kept in the file, so a restarted server relays under
  // the same origin (its outbox offsets go on increasing) and a new file gets a new one.
  const now = yield* Clock.currentTimeMillis
  const origin = yield* outbox.db.transaction("origin", (orm) => {
    const stored = Checkpoints.load(orm, ORIGIN_ROW)
    if (Option.isSome(stored)) return stored.value
    const made = uuidv7(now)
    Checkpoints.save(orm, ORIGIN_ROW, made, now)
    return made
  })
  // Past this point the main connection writes only the relay cursor and consumers'
  // checkpoints, both of which only cost a repeat when lost (relay repeats are dropped by the
  // consumers, see above): no fsync per relayed batch on the event loop (measured: it stalled
  // the webhook answers). Appends commit on the writer thread's own connection, still FULL.
  yield* outbox.db.use("pragma", (_, client) => client.pragma("synchronous = NORMAL"))

  const client = yield* KafkaClient.connect(options)
  const relay = yield* Relay.start(client, outbox, origin, options)
  const reader = TopicReader.make(client, outbox, options)

  const service: EventLogService = {
    append: outbox.service.append,
    ...reader,
    checkpoint: outbox.service.checkpoint,
    head: outbox.service.head,
    lag: lagOf,
    relayBacklog: Effect.suspend(() => outbox.lagAfter(relay.relayedUpTo())).pipe(Effect.map(Option.some))
  }
  const progress: RelayProgressService = {
    head: outbox.db.use("outbox head", (_, client) => Queries.head(client)),
    relayed: Effect.sync(relay.relayedUpTo),
    status: relay.status,
    deadLetters: relay.deadLetters,
    redrive: relay.redrive
  }
  return { service, direct: outbox.direct, progress }
})

/**
 * A reader's lag over Kafka: its checkpoint holds topic positions, which the outbox's offsets
 * cannot measure (and another server's records are on the topic too): unknown.
 */
const lagOf = (checkpoint: Checkpoint): Effect.Effect<Option.Option<Lag>, InvalidCheckpoint> =>
  Checkpoints.parseKafkaState(checkpoint) !== undefined || Checkpoints.parseSqlite(checkpoint) !== undefined
    ? Effect.succeed(Option.none())
    : Effect.fail(new InvalidCheckpoint({ checkpoint, message: `not a checkpoint of an event log: ${checkpoint}` }))

/**
 * The log on a Kafka topic: `EventLog`, and `DirectAppend` into the same outbox. Fails with
 * `KafkaUnavailable` when the broker cannot be reached at start.
 */
export const layer = (options: Options): Layer.Layer<EventLog | DirectAppend | RelayProgress, SqliteError | KafkaUnavailable> =>
  Layer.effectContext(Effect.map(make(options), ({ direct, progress, service }) =>
    Context.make(EventLog, service).pipe(Context.add(DirectAppend, direct), Context.add(RelayProgress, progress))))
