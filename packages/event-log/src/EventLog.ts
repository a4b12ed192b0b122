/**
 * The event log: every fact the engine receives, appended exactly as received.
 *
 * This module holds the service's tag and interface only. Each implementation exports its own
 * layer: `SqliteEventLog.layer(options)` (default: one WAL file, group commit) and
 * `KafkaEventLog.layer(options)` (a SQLite outbox relayed to a Kafka topic keyed by tenant).
 * Both also provide `DirectAppend`, appends from plain callbacks.
 */
import { Context, type Effect, type Option, type Stream } from "effect"
import type { EventLogError } from "./EventLogError.ts"
import type { AppendResult, Checkpoint, Delivery, Lag, LogRecord, NewRecord, Offset, ReadOptions, SubscribeOptions, TenantFilter } from "./LogRecord.ts"

export interface EventLogService {
  /**
   * Appends a batch; resolves only after the transaction holding it committed (durable), with
   * one result per record in order: `Appended` (new offset) or `Duplicate` (offset of the fact
   * it repeats). Records of one call are contiguous in the log and committed atomically.
   */
  readonly append: (batch: ReadonlyArray<NewRecord>) => Effect.Effect<ReadonlyArray<AppendResult>, EventLogError>
  /** The records present when the stream starts, in log order, page by page (bounded memory). */
  readonly read: (options: ReadOptions) => Stream.Stream<LogRecord, EventLogError>
  /** Catches up from the consumer's checkpoint, then follows new appends; never ends by itself. */
  readonly subscribe: (consumer: string, options: SubscribeOptions) => Stream.Stream<Delivery, EventLogError>
  /** Stores a consumer's checkpoint in the log's own file (for consumers without a file). */
  readonly commit: (consumer: string, checkpoint: Checkpoint) => Effect.Effect<void, EventLogError>
  readonly checkpoint: (consumer: string) => Effect.Effect<Option.Option<Checkpoint>, EventLogError>
  /**
   * The last offset appended (0 when empty), of the whole log or of one tenant. Kafka mode:
   * the last offset of this server's outbox (what it appended, relayed or not).
   */
  readonly head: (tenant?: TenantFilter) => Effect.Effect<Offset, EventLogError>
  /**
   * How far a reader resuming at `checkpoint` is behind this log's head (of one tenant when
   * given). None when the checkpoint holds topic positions (Kafka mode), which the outbox's
   * offsets cannot measure. Fails with `InvalidCheckpoint` for a value no log produced.
   */
  readonly lag: (checkpoint: Checkpoint, tenant?: TenantFilter) => Effect.Effect<Option.Option<Lag>, EventLogError>
  /**
   * Kafka mode: the outbox records not acknowledged by the broker yet (acknowledged appends only
   * this server's disk holds). None in SQLite mode, which has no relay.
   */
  readonly relayBacklog: Effect.Effect<Option.Option<Lag>, EventLogError>
}

export class EventLog extends Context.Service<EventLog, EventLogService>()("@ocs/event-log/EventLog") {}
