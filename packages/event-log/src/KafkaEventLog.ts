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
 * kafkajs is used in this module only, so a KafkaJS-compatible client can replace it here.
 */
import { Ids } from "@ocs/protocol"
import type { Consumer, Producer, RetryOptions } from "kafkajs"
import { eq } from "drizzle-orm"
import { Cause, Clock, Context, Deferred, Effect, Layer, Option, Queue, Result, Schedule, type Scope, Stream } from "effect"
import * as Checkpoints from "./Checkpoints.ts"
import { DirectAppend, type DirectAppendService } from "./DirectAppend.ts"
import { EventLog, type EventLogService } from "./EventLog.ts"
import { type EventLogError, InvalidCheckpoint, KafkaUnavailable, RecordDecodeError, RecordTooLarge, type SqliteError } from "./EventLogError.ts"
import * as DeadLetters from "./internal/relayDeadLetters.ts"
import type { DeadLetter } from "./internal/relayDeadLetters.ts"
import * as Sizing from "./internal/relaySizing.ts"
import { recordToRow, rowToRecord } from "./internal/recordRow.ts"
import * as Queries from "./internal/logQueries.ts"
import * as Core from "./internal/sqliteLog.ts"
import { type Checkpoint, type Delivery, type Lag, type LogRecord, type ReadOptions, type SubscribeOptions, topicPosition, uuidv7 } from "./LogRecord.ts"
import { relayState } from "./Tables.ts"

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

export type { DeadLetter }

export interface RelayStatus {
  /**
   * False once the relay has failed to get a request acknowledged for `relayDownAfterMillis`
   * (the broker is down or refuses every request): what it relays waits in the outbox.
   */
  readonly up: boolean
  /** Since when (ms epoch) requests have been failing, null while they are acknowledged. */
  readonly failingSince: number | null
  /** Failed attempts in a row. */
  readonly failures: number
  /** The last failure's kind (a Kafka error type such as NOT_ENOUGH_REPLICAS, or an error name). */
  readonly lastError: string | null
  /** The largest request the relay sends (bytes), and where that number comes from. */
  readonly limitBytes: number
  readonly limitSource: string
  /** Records set aside for their size, waiting for a redrive. */
  readonly deadLetters: number
}

export class RelayProgress extends Context.Service<RelayProgress, RelayProgressService>()("@ocs/event-log/RelayProgress") {}

/** Runs `loop` for ever: restarts it after each failure (interruption stops it). */
export type Supervise = (name: string, loop: Effect.Effect<unknown, unknown>) => Effect.Effect<unknown>

/** The relay's default supervisor: log, back off (capped exponential), start again. */
const restartAfterBackoff = (backoff: { readonly initial: number; readonly max: number }): Supervise => (name, loop) =>
  loop.pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.logError(`${name} stopped; restarting it after a backoff`, cause).pipe(Effect.andThen(Effect.fail(cause)))
    ),
    Effect.retry(Schedule.min([Schedule.exponential(backoff.initial), Schedule.spaced(backoff.max)])),
    // Unreachable (the schedule never ends): typed as never failing for the caller.
    Effect.catch(() => Effect.never)
  )

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

const HEADER_ID = "ocs-record-id"
const HEADER_ORIGIN = "ocs-origin"
/** Where the outbox file keeps its origin id (a row of its `consumer_checkpoints`). */
const ORIGIN_ROW = "@kafka-relay-origin"

const headerText = (value: Buffer | string | ReadonlyArray<Buffer | string> | undefined): string | undefined =>
  value === undefined ? undefined : Array.isArray(value) ? headerText(value[0]) : String(value)

/**
 * The message value: the stored row (meta as its JSON text; `offset` is the outbox offset), so
 * decoding is the row decoder's, and the outbox's origin. In the value rather than in headers:
 * the value is parsed anyway, while every header costs an encode and a decode per consumer.
 */
const encodeValue = (record: LogRecord, origin: string) => JSON.stringify({ v: 1, origin, ...recordToRow(record) })

const decodeValue = (value: Buffer | null, where: string): Result.Result<{ readonly record: LogRecord; readonly origin: string | undefined }, RecordDecodeError> => {
  if (value === null) return Result.fail(new RecordDecodeError({ where, message: "message without value" }))
  let row: unknown
  try {
    row = JSON.parse(value.toString("utf8"))
  } catch (cause) {
    return Result.fail(new RecordDecodeError({ where, message: `message value is not JSON: ${String(cause)}` }))
  }
  const origin = (row as { readonly origin?: unknown } | null)?.origin
  return Result.map(rowToRecord(row, where), (record) => ({ record, origin: typeof origin === "string" ? origin : undefined }))
}

/**
 * Drops relay repeats: per partition, per origin, the highest outbox offset delivered (see the
 * module comment). Messages without an origin (relayed before origins existed) fall back to
 * the record ids remembered in memory.
 */
const relayRepeats = (seen: Map<number, Map<string, number>>, fresh: (id: string) => boolean) =>
  (record: LogRecord, partition: number): boolean => {
    const origin = record.kafka?.origin
    const at = record.kafka?.outboxOffset
    if (origin === undefined || at === undefined) return !fresh(record.id)
    let marks = seen.get(partition)
    if (marks === undefined) seen.set(partition, marks = new Map())
    const high = marks.get(origin)
    if (high !== undefined && at <= high) return true
    marks.set(origin, at)
    return false
  }

/** Remembers the last `capacity` ids (insertion order), to drop repeats. */
const recentIds = (capacity: number) => {
  const seen = new Set<string>()
  return (id: string): boolean => {
    if (seen.has(id)) return false
    seen.add(id)
    if (seen.size > capacity) seen.delete(seen.values().next().value!)
    return true
  }
}

/** An outbox record on its way: the message and its size in a record batch. */
interface Outgoing {
  readonly record: LogRecord
  readonly message: Sizing.OutgoingMessage
  readonly bytes: number
}

interface Raw {
  readonly record: LogRecord
  readonly partition: number
  readonly offset: string
}

/** The log, its direct appends and the relay's progress, in the current scope. */
export interface Made {
  readonly service: EventLogService
  readonly direct: DirectAppendService
  readonly progress: RelayProgressService
}

export const make = Effect.fnUntraced(function*(
  options: Options
): Effect.fn.Return<Made, SqliteError | KafkaUnavailable, Scope.Scope> {
  const brokers = [...options.brokers]
  const topic = options.topic
  const clientId = options.clientId ?? "ocs-event-log"
  const unavailable = (what: string) => (cause: unknown) =>
    new KafkaUnavailable({
      brokers,
      message: `Kafka at ${brokers.join(",")} ${what}: ${cause instanceof Error ? cause.message : String(cause)}`,
      cause
    })

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

  // kafkajs is loaded by the Kafka mode only: a process on the SQLite log never holds it.
  const { Kafka, logLevel } = yield* Effect.promise(() => import("kafkajs"))
  const kafka = new Kafka({
    clientId,
    brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: options.connectionTimeoutMillis ?? 3000,
    retry: options.retry ?? { retries: 3, initialRetryTime: 200, maxRetryTime: 2000 }
  })

  // Start: the broker must answer and the topic must exist, else a typed error.
  const admin = kafka.admin()
  yield* Effect.acquireRelease(
    Effect.tryPromise({ try: () => admin.connect(), catch: unavailable("cannot be reached") }),
    () => Effect.promise(() => admin.disconnect().catch(() => undefined))
  )
  yield* Effect.tryPromise({
    try: () =>
      admin.createTopics({
        waitForLeaders: true,
        topics: [{ topic, numPartitions: options.partitions ?? 6, replicationFactor: options.replicationFactor ?? 1 }]
      }),
    catch: unavailable(`could not create topic ${topic}`)
  })

  // The relay.
  const batchSize = options.relayBatchSize ?? 500
  const backoff = options.relayBackoffMillis ?? { initial: 100, max: 10_000 }
  const downAfterMillis = options.relayDownAfterMillis ?? 30_000
  let producer: Producer | undefined
  const connectedProducer = Effect.tryPromise({
    try: async () => {
      if (producer !== undefined) return producer
      // Bounded retries (kafkajs retries an idempotent producer's send for ever by default, so a
      // broker refusing every request, e.g. NOT_ENOUGH_REPLICAS, would hold the relay in one
      // silent `send`): the relay's own backoff takes over, and its status shows the failure.
      // Repeats this may cause are dropped by the consumers (see the module comment).
      const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: options.producerRetry ?? { retries: 5, initialRetryTime: 100, maxRetryTime: 2000 } })
      await p.connect()
      producer = p
      return p
    },
    catch: unavailable("refused the producer")
  })
  const dropProducer = Effect.promise(async () => {
    const p = producer
    producer = undefined
    await p?.disconnect().catch(() => undefined)
  })

  // How large one request may be: the topic's limit as the broker tells it (read at start and
  // again whenever the broker refuses a batch for its size), capped by `maxRequestBytes`.
  let limit = { bytes: options.maxRequestBytes ?? Sizing.KAFKA_DEFAULT_LIMIT_BYTES, source: options.maxRequestBytes === undefined ? "Kafka's default" : "maxRequestBytes" }
  const readLimit = Effect.gen(function*() {
    const told = yield* Effect.promise(() => Sizing.readBrokerLimit(admin, topic).catch((e: unknown) => ({ unknown: String(e) })))
    if ("unknown" in told) yield* Effect.logWarning(`event-log relay: the broker did not tell topic ${topic}'s max.message.bytes (${told.unknown})`)
    const next = "unknown" in told
      ? { bytes: options.maxRequestBytes ?? Sizing.KAFKA_DEFAULT_LIMIT_BYTES, source: options.maxRequestBytes === undefined ? "Kafka's default (the broker did not say)" : "maxRequestBytes (the broker did not say)" }
      : options.maxRequestBytes !== undefined && options.maxRequestBytes < told.bytes
      ? { bytes: options.maxRequestBytes, source: "maxRequestBytes" }
      : told
    if (next.bytes !== limit.bytes) yield* Effect.logInfo(`event-log relay: requests up to ${next.bytes} bytes (${next.source})`)
    limit = next
  })
  yield* readLimit

  const deadLetters = DeadLetters.make(outbox.db, topic)
  let waitingLetters = yield* deadLetters.countWaiting

  const relayedOffset = outbox.db.use("relay", (orm) =>
    orm.select({ offset: relayState.relayedOffset }).from(relayState).where(eq(relayState.name, topic)).get()?.offset ?? 0
  )
  const saveRelayed = (offset: number, now: number) =>
    outbox.db.transaction("relay", (orm) =>
      orm.insert(relayState).values({ name: topic, relayedOffset: offset, updatedAt: now })
        .onConflictDoUpdate({ target: relayState.name, set: { relayedOffset: offset, updatedAt: now } }).run()
    )

  const toOutgoing = (record: LogRecord, from: string): Outgoing => {
    const message = { key: Ids.tenantKey(record), value: encodeValue(record, from), headers: { [HEADER_ID]: record.id } }
    return { record, message, bytes: Sizing.messageBytes(message) }
  }

  // Since when the request in flight has waited (a broker that neither answers nor fails).
  let sendingSince: number | undefined
  const send = (batch: ReadonlyArray<Outgoing>) =>
    Effect.gen(function*() {
      sendingSince = yield* Clock.currentTimeMillis
      const p = yield* connectedProducer
      yield* Effect.tryPromise({
        try: () => p.send({ topic, acks: -1, messages: batch.map((o) => o.message) }),
        catch: unavailable("did not acknowledge")
      })
    }).pipe(Effect.ensuring(Effect.sync(() => (sendingSince = undefined))))

  /** Sets a record aside: noted in the outbox file, logged as a typed error; the relay goes on. */
  const refuse = (o: Outgoing, reason: string) =>
    Effect.gen(function*() {
      const error = new RecordTooLarge({
        appId: o.record.appId,
        businessId: o.record.businessId,
        offset: o.record.offset,
        recordId: o.record.id,
        bytes: o.bytes,
        limitBytes: limit.bytes,
        message: `event-log relay: record ${o.record.id} of ${Ids.tenantKey(o.record)} (outbox offset ${o.record.offset}, ` +
          `${o.record.type}) takes ${o.bytes} bytes, more than topic ${topic} accepts (${limit.bytes} bytes, ${limit.source}): ${reason}. ` +
          `It stays in the outbox as a relay dead letter; raise the topic's max.message.bytes, then redrive it.`
      })
      yield* deadLetters.add({
        offset: o.record.offset,
        tenant: Ids.tenantKey(o.record),
        recordId: o.record.id,
        type: o.record.type,
        bytes: o.bytes,
        limitBytes: limit.bytes,
        reason,
        refusedAt: yield* Clock.currentTimeMillis
      })
      waitingLetters++
      yield* Effect.logError(error.message, error)
    })

  // The relay's failures in a row (reset by an acknowledged send), for `RelayProgress.status`.
  let failing: { readonly since: number; attempts: number; lastError: string } | undefined

  /**
   * Sends until the broker acknowledges ("sent"), backing off while it fails; "too large" when
   * it refused the batch for its size (retrying that would never end).
   */
  const sendWithBackoff = (batch: ReadonlyArray<Outgoing>) => {
    const attempt = (n: number): Effect.Effect<"sent" | "too large"> =>
      send(batch).pipe(
        Effect.as("sent" as const),
        Effect.tap(() => Effect.sync(() => (failing = undefined))),
        Effect.catchTag("KafkaUnavailable", (error) =>
          Effect.gen(function*() {
            yield* dropProducer
            if (Sizing.isTooLarge(error.cause)) return "too large" as const
            const now = yield* Clock.currentTimeMillis
            const reason = Sizing.kafkaErrorType(error.cause) ?? (error.cause instanceof Error ? error.cause.name : "error")
            if (failing === undefined) failing = { since: now, attempts: 0, lastError: reason }
            failing.attempts++
            failing.lastError = reason
            // Never below zero: a delay past the cap (or from a clock moved back) is the cap.
            const delay = Math.max(0, Math.min(backoff.max, backoff.initial * 2 ** Math.min(n, 30)))
            yield* Effect.logWarning(`event-log relay: ${error.message}; retry ${n + 1} in ${delay} ms`)
            yield* Effect.sleep(delay)
            return yield* attempt(n + 1)
          }))
      )
    return attempt(0)
  }

  // The relay cursor is saved at most every `cursorSaveMillis` (sooner when it stops). Its transaction waits for the outbox's write lock, which the
  // writer thread holds while it fsyncs: one wait per batch stalled the event loop (and a busy
  // lock ended the relay). A cursor saved late only means a repeat, which consumers drop.
  const cursorSaveMillis = options.relayCursorSaveMillis ?? 1000
  const linger = options.relayLingerMillis ?? 20
  // The acknowledged position, for `RelayProgress` (the relay's own cursor, kept across its restarts).
  let relayedUpTo = yield* relayedOffset
  const relay = Effect.gen(function*() {
    let cursor = yield* relayedOffset
    relayedUpTo = Math.max(relayedUpTo, cursor)
    let saved = cursor
    let savedAt = yield* Clock.currentTimeMillis
    const save = Effect.gen(function*() {
      if (saved === cursor) return
      const now = yield* Clock.currentTimeMillis
      const at = cursor
      yield* saveRelayed(at, now).pipe(
        Effect.tap(() => Effect.sync(() => (saved = at))),
        Effect.catch((error) => Effect.logDebug(`event-log relay: cursor not saved this time (${error.message})`))
      )
      savedAt = now
    })
    // After the broker refused a batch for its size, fewer records per request until one is
    // acknowledged (the sizes here are upper bounds, so this only happens when the topic's limit
    // was lowered since it was read).
    let cap = batchSize
    // Records read from the outbox and not settled yet (from cursor + 1, in order): a page of
    // large records takes several requests, and is neither read nor encoded again for each.
    let pending: ReadonlyArray<LogRecord> = []
    // Rows per outbox read: fewer when records are large, so that a read holds about two
    // requests' worth instead of 500 records of any size.
    let readSize = batchSize
    return yield* Effect.gen(function*() {
      while (true) {
        if (pending.length === 0) {
          const wake = outbox.nextCommit()
          let page = yield* outbox.page(cursor + 1, readSize)
          if (page.length > 0 && page.length < readSize && linger > 0) {
            // Linger: what arrives in the next few ms goes in the same request (fewer, larger
            // produce requests: less work for the client, the broker and the consumers' fetches).
            yield* Effect.sleep(linger)
            page = yield* outbox.page(cursor + 1, readSize)
          }
          if (page.length === 0) {
            const sinceSave = (yield* Clock.currentTimeMillis) - savedAt
            if (sinceSave >= cursorSaveMillis) yield* save
            const nap = saved === cursor ? outbox.pollIntervalMillis : Math.min(outbox.pollIntervalMillis, Math.max(1, cursorSaveMillis - sinceSave))
            yield* Effect.race(Deferred.await(wake), Effect.sleep(nap))
            continue
          }
          pending = page
        }
        // Bounded by bytes as well as by count: the broker refuses a batch past its limit.
        const batch: Array<Outgoing> = []
        let bytes = Sizing.BATCH_OVERHEAD_BYTES
        let first: Outgoing | undefined
        for (const record of pending) {
          if (batch.length >= cap) break
          const o = toOutgoing(record, origin)
          first ??= o
          if (bytes + o.bytes > limit.bytes) break
          batch.push(o)
          bytes += o.bytes
        }
        // How many of `pending` are settled: acknowledged, or set aside.
        let settled: number
        if (batch.length === 0) {
          yield* refuse(first!, "larger than the limit before sending")
          settled = 1
        } else if ((yield* sendWithBackoff(batch)) === "too large") {
          const before = limit.bytes
          yield* readLimit
          if (batch.length > 1 || limit.bytes !== before) {
            cap = Math.max(1, Math.floor(batch.length / 2))
            continue
          }
          yield* refuse(batch[0]!, "the broker refused it (MESSAGE_TOO_LARGE)")
          settled = 1
        } else {
          cap = batchSize
          settled = batch.length
          const average = (bytes - Sizing.BATCH_OVERHEAD_BYTES) / batch.length
          readSize = Math.max(1, Math.min(batchSize, Math.ceil((2 * limit.bytes) / average)))
        }
        cursor = pending[settled - 1]!.offset
        pending = pending.slice(settled)
        relayedUpTo = cursor
        if ((yield* Clock.currentTimeMillis) - savedAt >= cursorSaveMillis) yield* save
      }
    }).pipe(Effect.ensuring(save))
  }).pipe(Effect.onExit(() => dropProducer))
  // Each start reads the cursor again, so a restarted relay resumes where the last ack left it.
  const supervise = options.supervise ?? restartAfterBackoff(backoff)
  yield* Effect.forkScoped(supervise("event-log-relay", relay))

  const status = Effect.map(Clock.currentTimeMillis, (now): RelayStatus => {
    const since = failing?.since ?? (sendingSince !== undefined && now - sendingSince >= downAfterMillis ? sendingSince : undefined)
    return {
      up: since === undefined || now - since < downAfterMillis,
      failingSince: since ?? null,
      failures: failing?.attempts ?? 0,
      lastError: failing?.lastError ?? (since === undefined ? null : "no acknowledgement"),
    limitBytes: limit.bytes,
      limitSource: limit.source,
      deadLetters: waitingLetters
    }
  })

  /**
   * Puts the waiting dead letters that fit under the topic's limit now on the topic, in outbox
   * order, under an origin of their own: consumers drop a message whose outbox offset is at or
   * below the highest they had from its origin, and the relay's own origin is past these.
   */
  const redrive = Effect.gen(function*() {
    yield* readLimit
    const letters = yield* deadLetters.waiting
    const from = `${origin}:redrive:${uuidv7(yield* Clock.currentTimeMillis)}`
    let redriven = 0
    let stillTooLarge = 0
    for (const letter of letters) {
      const record = (yield* outbox.page(letter.offset, 1))[0]
      if (record === undefined || record.offset !== letter.offset) continue
      const o = toOutgoing(record, from)
      if (!Sizing.fitsAlone(o.bytes, limit.bytes)) {
        stillTooLarge++
        continue
      }
      yield* send([o])
      yield* deadLetters.redriven(letter.offset, yield* Clock.currentTimeMillis)
      waitingLetters = Math.max(0, waitingLetters - 1)
      redriven++
    }
    yield* Effect.logInfo(`event-log relay: redrove ${redriven} dead letter(s) to ${topic}; ${stillTooLarge} still larger than ${limit.bytes} bytes`)
    return { redriven, stillTooLarge }
  })

  // Consuming the topic.
  const dedupeMemory = options.dedupeMemory ?? 100_000

  /**
   * Messages from `start` (per partition; absent partitions from the beginning). With `stopAt`
   * (per partition: the end offset), the stream ends once every partition reached it.
   */
  const consume = (start: ReadonlyMap<number, string>, stopAt: ReadonlyMap<number, string> | undefined) =>
    Stream.callback<Raw, KafkaUnavailable | RecordDecodeError>((queue) =>
      Effect.gen(function*() {
        const remaining = new Set<number>()
        if (stopAt !== undefined) {
          for (const [partition, end] of stopAt) {
            if (Number(start.get(partition) ?? "0") < Number(end)) remaining.add(partition)
          }
          if (remaining.size === 0) return yield* Queue.end(queue)
        }
        const consumer: Consumer = kafka.consumer({
          groupId: `${clientId}-${uuidv7(Date.now())}`,
          minBytes: options.fetchMinBytes ?? 65_536,
          maxWaitTimeInMs: options.fetchMaxWaitMillis ?? 20
        })
        yield* Effect.acquireRelease(
          Effect.tryPromise({ try: () => consumer.connect(), catch: unavailable("refused the consumer") }),
          () => Effect.promise(() => consumer.disconnect().catch(() => undefined))
        )
        consumer.on(consumer.events.CRASH, (event) => {
          if (!event.payload.restart) Queue.failCauseUnsafe(queue, Cause.fail(unavailable("stopped the consumer")(event.payload.error)))
        })
        yield* Effect.tryPromise({
          try: () => consumer.subscribe({ topics: [topic], fromBeginning: true }),
          catch: unavailable(`could not subscribe to ${topic}`)
        })
        yield* Effect.tryPromise({
          try: () =>
            consumer.run({
              autoCommit: false,
              // One hand-over per fetched batch (not per message): one queue offer, one
              // heartbeat, decoding in a plain loop.
              eachBatch: async ({ batch, heartbeat }) => {
                const partition = batch.partition
                const end = stopAt?.get(partition)
                const endAt = end === undefined ? undefined : Number(end)
                const raws: Array<Raw> = []
                let reachedEnd = false
                for (const message of batch.messages) {
                  const at = Number(message.offset)
                  if (endAt !== undefined && at >= endAt) break
                  const decoded = decodeValue(message.value, `${topic}/${partition}@${message.offset}`)
                  if (Result.isFailure(decoded)) {
                    Queue.failCauseUnsafe(queue, Cause.fail(decoded.failure))
                    return
                  }
                  const { origin: relayedBy, record: row } = decoded.success
                  const record: LogRecord = {
                    ...row,
                    offset: topicPosition(partition, message.offset),
                    kafka: {
                      partition,
                      offset: message.offset,
                      // Messages relayed before the origin moved into the value carry it as a header.
                      origin: relayedBy ?? headerText(message.headers?.[HEADER_ORIGIN]),
                      outboxOffset: row.offset
                    }
                  }
                  raws.push({ record, partition, offset: message.offset })
                  if (endAt !== undefined && at + 1 >= endAt) reachedEnd = true
                }
                if (raws.length > 0) await Effect.runPromise(Queue.offerAll(queue, raws))
                if (reachedEnd) {
                  remaining.delete(partition)
                  if (remaining.size === 0) Queue.endUnsafe(queue)
                }
                await heartbeat()
              }
            }),
          catch: unavailable("could not start the consumer")
        })
        for (const [partition, offset] of start) consumer.seek({ topic, partition, offset })
      }), { bufferSize: 256, strategy: "suspend" })

  const matches = (options: { readonly tenant: string; readonly types?: ReadonlyArray<string> | undefined }) => {
    const types = options.types === undefined ? undefined : new Set(options.types)
    return (record: LogRecord) =>
      (options.tenant === "all" || Ids.tenantKey(record) === options.tenant) &&
      (types === undefined || types.has(record.type))
  }

  const read = (options: ReadOptions): Stream.Stream<LogRecord, EventLogError> =>
    Stream.unwrap(Effect.gen(function*() {
      const ends = yield* Effect.tryPromise({ try: () => admin.fetchTopicOffsets(topic), catch: unavailable("did not answer") })
      const stopAt = new Map(ends.map((e) => [e.partition, e.high] as const))
      const repeat = relayRepeats(new Map(), recentIds(dedupeMemory))
      const wanted = matches(options)
      return consume(new Map(), stopAt).pipe(
        Stream.filter(({ partition, record }) =>
          !repeat(record, partition) && wanted(record) &&
          (options.untilOffset === undefined || record.offset <= options.untilOffset) &&
          (options.untilReceivedAt === undefined || record.receivedAt <= options.untilReceivedAt)
        ),
        Stream.map(({ record }) => record)
      )
    }))

  const commit = Effect.fn("EventLog.commit")(function*(consumer: string, checkpoint: Checkpoint) {
    if (Checkpoints.parseKafkaState(checkpoint) === undefined) {
      return yield* new InvalidCheckpoint({ checkpoint, message: `not a checkpoint of a Kafka event log: ${checkpoint}` })
    }
    return yield* outbox.service.commit(consumer, checkpoint)
  })

  const subscribe = (consumer: string, options: SubscribeOptions): Stream.Stream<Delivery, EventLogError> =>
    Stream.unwrap(Effect.gen(function*() {
      const from = options.from ?? Option.getOrUndefined(yield* outbox.service.checkpoint(consumer))
      const state = from === undefined ? { next: new Map<number, string>(), seen: new Map<number, Map<string, number>>() } : Checkpoints.parseKafkaState(from)
      if (state === undefined) {
        return yield* new InvalidCheckpoint({ checkpoint: from ?? "", message: `not a checkpoint of a Kafka event log: ${from}` })
      }
      const repeat = relayRepeats(state.seen, recentIds(dedupeMemory))
      const wanted = matches(options)
      const position = new Map(state.next)
      return consume(state.next, undefined).pipe(
        Stream.filterMap(({ record, partition, offset }) => {
          position.set(partition, String(Number(offset) + 1))
          return !repeat(record, partition) && wanted(record)
            ? Result.succeed<Delivery>({ record, checkpoint: Checkpoints.kafkaWithSeen(position, state.seen) })
            : Result.failVoid
        })
      )
    }))

  const service: EventLogService = {
    append: outbox.service.append,
    read,
    subscribe,
    commit,
    checkpoint: outbox.service.checkpoint,
    head: outbox.service.head,
    lag: lagOf,
    relayBacklog: Effect.suspend(() => outbox.lagAfter(relayedUpTo)).pipe(Effect.map(Option.some))
  }
  const progress: RelayProgressService = {
    head: outbox.db.use("outbox head", (_, client) => Queries.head(client)),
    relayed: Effect.sync(() => relayedUpTo),
    status,
    deadLetters: deadLetters.waiting,
    redrive
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
