/**
 * The Kafka log's relay: moves outbox records to the topic in outbox order (see the module
 * comment of KafkaEventLog.ts), sizing requests under the topic's limit, setting aside a record
 * too large for it (a dead letter, redriven on demand), backing off while the broker fails, and
 * telling how far it got and whether it is up.
 */
import { Ids } from "@ocs/protocol"
import type { Producer } from "kafkajs"
import { eq } from "drizzle-orm"
import { Cause, Clock, Deferred, Effect, Schedule, type Scope } from "effect"
import { RecordTooLarge, type EventLogError, type SqliteError } from "../EventLogError.ts"
import { type LogRecord, uuidv7 } from "../LogRecord.ts"
import { relayState } from "../Tables.ts"
import type { KafkaClient } from "./kafkaClient.ts"
import { encodeValue, HEADER_ID } from "./kafkaMessages.ts"
import type { Options, Supervise } from "./kafkaOptions.ts"
import * as DeadLetters from "./relayDeadLetters.ts"
import type { DeadLetter } from "./relayDeadLetters.ts"
import * as Sizing from "./relaySizing.ts"
import type { Core } from "./sqliteLog.ts"

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

/** An outbox record on its way: the message and its size in a record batch. */
interface Outgoing {
  readonly record: LogRecord
  readonly message: Sizing.OutgoingMessage
  readonly bytes: number
}

/** The relay, running in the current scope, as `RelayProgress` and the log's backlog see it. */
export interface Relay {
  /** Every outbox record at or below this offset is acknowledged (or set aside). */
  readonly relayedUpTo: () => number
  readonly status: Effect.Effect<RelayStatus>
  readonly deadLetters: Effect.Effect<ReadonlyArray<DeadLetter>, SqliteError>
  readonly redrive: Effect.Effect<{ readonly redriven: number; readonly stillTooLarge: number }, EventLogError>
}

/** Starts the relay of `outbox` (whose records it sends under `origin`) to the client's topic. */
export const start = Effect.fnUntraced(function*(
  client: KafkaClient,
  outbox: Core,
  origin: string,
  options: Options
): Effect.fn.Return<Relay, SqliteError, Scope.Scope> {
  const { kafka, admin, topic, unavailable } = client
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

  return { relayedUpTo: () => relayedUpTo, status, deadLetters: deadLetters.waiting, redrive }
})
