/**
 * The event log: every fact the engine receives, appended exactly as received.
 *
 * One interface, two layers: `EventLog.layerSqlite` (default: one WAL file, group commit) and
 * `EventLog.layerKafka` (a SQLite outbox relayed to a Kafka topic keyed by tenant).
 */
import { Context, Effect, type Exit, Layer, type Option, type Stream } from "effect"
import type { EventLogError, KafkaUnavailable, SqliteError } from "./EventLogError.ts"
import * as KafkaEventLog from "./KafkaEventLog.ts"
import type { AppendResult, Checkpoint, Delivery, LogRecord, NewRecord, ReadOptions, SubscribeOptions } from "./LogRecord.ts"
import * as SqliteEventLog from "./SqliteEventLog.ts"

export interface EventLogService {
  /**
   * Appends a batch; resolves only after the transaction holding it committed (durable), with
   * one result per record in order: `Appended` (new offset) or `Duplicate` (offset of the fact
   * it repeats). Records of one call are contiguous in the log and committed atomically.
   */
  readonly append: (batch: ReadonlyArray<NewRecord>) => Effect.Effect<ReadonlyArray<AppendResult>, EventLogError>
  /**
   * `append` for code outside any fiber (a Node request listener on its hot path): the same
   * semantics and guarantees, the outcome handed to `onExit` once known. Never throws.
   */
  readonly appendUnsafe: (
    batch: ReadonlyArray<NewRecord>,
    onExit: (exit: Exit.Exit<ReadonlyArray<AppendResult>, EventLogError>) => void
  ) => void
  /** The records present when the stream starts, in log order, page by page (bounded memory). */
  readonly read: (options: ReadOptions) => Stream.Stream<LogRecord, EventLogError>
  /** Catches up from the consumer's checkpoint, then follows new appends; never ends by itself. */
  readonly subscribe: (consumer: string, options: SubscribeOptions) => Stream.Stream<Delivery, EventLogError>
  /** Stores a consumer's checkpoint in the log's own file (for consumers without a file). */
  readonly commit: (consumer: string, checkpoint: Checkpoint) => Effect.Effect<void, EventLogError>
  readonly checkpoint: (consumer: string) => Effect.Effect<Option.Option<Checkpoint>, EventLogError>
}

export class EventLog extends Context.Service<EventLog, EventLogService>()("@ocs/event-log/EventLog") {
  static readonly layerSqlite = (options: SqliteEventLog.Options): Layer.Layer<EventLog, SqliteError> =>
    Layer.effect(EventLog, SqliteEventLog.make(options))

  static readonly layerKafka = (options: KafkaEventLog.Options): Layer.Layer<EventLog, SqliteError | KafkaUnavailable> =>
    Layer.effect(EventLog, KafkaEventLog.make(options))
}

/**
 * An `appendUnsafe` that runs the given `append`: for a log that wraps another one and changes
 * `append` (a test putting failures in front of the real log, a read-only view).
 */
export const appendUnsafeFrom = (append: EventLogService["append"]): EventLogService["appendUnsafe"] => (batch, onExit) => {
  Effect.runCallback(append(batch), { onExit })
}
