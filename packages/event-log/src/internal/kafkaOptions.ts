/** The options of the Kafka event log (`KafkaEventLog.Options`), apart so its parts share them. */
import type { Effect } from "effect"
import type { RetryOptions } from "kafkajs"

/** Runs `loop` for ever: restarts it after each failure (interruption stops it). */
export type Supervise = (name: string, loop: Effect.Effect<unknown, unknown>) => Effect.Effect<unknown>

export interface Options {
  /** host:port list of bootstrap brokers. */
  readonly brokers: ReadonlyArray<string>
  readonly topic: string
  /** Partitions when the topic is created (default 6). An existing topic is kept as it is. */
  readonly partitions?: number | undefined
  readonly replicationFactor?: number | undefined
  /** The local SQLite outbox file (an event-log file; also holds `EventLog.commit` checkpoints). */
  readonly outboxFilename: string
  readonly clientId?: string | undefined
  /** Outbox records per `send` at most (default 500); requests are bounded by bytes too. */
  readonly relayBatchSize?: number | undefined
  /**
   * The largest relay request in bytes. By default the relay asks the broker for the topic's
   * `max.message.bytes` (at start and whenever a batch is refused for its size) and sizes its
   * requests under it; this caps that number, and is used alone when the broker's configuration
   * cannot be read (then Kafka's default, 1,048,588, when unset).
   */
  readonly maxRequestBytes?: number | undefined
  /**
   * The relay counts as down (`RelayProgress.status`) once its requests have failed for this
   * long without one acknowledged (default 30 s).
   */
  readonly relayDownAfterMillis?: number | undefined
  /**
   * The relay saves its cursor (last outbox offset the broker acknowledged) at most this often
   * while busy, and whenever it goes idle or stops (default 1000 ms). After a crash it resends
   * from the saved cursor; consumers drop what they already had.
   */
  readonly relayCursorSaveMillis?: number | undefined
  /**
   * The relay waits this long for more records when a batch is not full (default 20 ms:
   * measured against 5 ms with 20,000 webhooks, the broker's CPU per webhook fell by about a
   * quarter and the end-to-end visibility lag p99 stayed within 10 ms).
   */
  readonly relayLingerMillis?: number | undefined
  /**
   * Consumers' fetch: the broker answers once this many bytes are ready or after
   * `fetchMaxWaitMillis` (defaults 64 KiB and 20 ms): fewer, larger fetches under load, at most
   * that wait added to the lag.
   */
  readonly fetchMinBytes?: number | undefined
  readonly fetchMaxWaitMillis?: number | undefined
  /** Relay backoff while the broker is down: first delay and cap (default 100 ms, 10 s). */
  readonly relayBackoffMillis?: { readonly initial: number; readonly max: number } | undefined
  /**
   * Runs the relay (named `event-log-relay`) while the log is open. A broker outage is retried
   * inside the relay; this is for what it cannot retry (its outbox read or cursor write
   * failing), which ends the relay. Default: log the failure and start the relay again after
   * the `relayBackoffMillis` backoff. A host with its own loop supervisor passes it here, so
   * the relay shows in its health.
   */
  readonly supervise?: Supervise | undefined
  /** kafkajs client retries (connect at start uses them; default 3 retries from 200 ms). */
  readonly retry?: RetryOptions | undefined
  /** Retries inside one relay `send` before the relay backs off on its own (default 5, from 100 ms to 2 s). */
  readonly producerRetry?: RetryOptions | undefined
  readonly connectionTimeoutMillis?: number | undefined
  /** Record ids remembered per stream to drop relay repeats (default 100,000). */
  readonly dedupeMemory?: number | undefined
  /** Outbox settings, as for the SQLite log. */
  readonly synchronous?: "FULL" | "NORMAL" | undefined
  readonly dedupeWindowMillis?: number | undefined
  readonly commitWindowMillis?: number | undefined
}
