/**
 * The Kafka log's readers: `read` (the topic from the beginning up to the end offsets present
 * when it starts) and `subscribe` (from a checkpoint, following the topic), each dropping relay
 * repeats, and `commit` of a consumer's Kafka checkpoint into the outbox file.
 */
import { Ids } from "@ocs/protocol"
import type { Consumer } from "kafkajs"
import { Cause, Effect, Option, Queue, Result, Stream } from "effect"
import * as Checkpoints from "../Checkpoints.ts"
import type { EventLogService } from "../EventLog.ts"
import { type EventLogError, InvalidCheckpoint, type KafkaUnavailable, type RecordDecodeError } from "../EventLogError.ts"
import { type Checkpoint, type Delivery, type LogRecord, type ReadOptions, type SubscribeOptions, topicPosition, uuidv7 } from "../LogRecord.ts"
import type { KafkaClient } from "./kafkaClient.ts"
import { decodeValue, HEADER_ORIGIN, headerText, recentIds, relayRepeats } from "./kafkaMessages.ts"
import type { Options } from "./kafkaOptions.ts"
import type { Core } from "./sqliteLog.ts"

interface Raw {
  readonly record: LogRecord
  readonly partition: number
  readonly offset: string
}

/** What the log reads from its topic; checkpoints are kept in `outbox`. */
export const make = (
  client: KafkaClient,
  outbox: Core,
  options: Options
): Pick<EventLogService, "read" | "subscribe" | "commit"> => {
  const { kafka, admin, topic, clientId, unavailable } = client
  const dedupeMemory = options.dedupeMemory ?? 100_000

  /**
   * Messages from `start` (per partition; absent partitions from the beginning). With `stopAt`
   * (per partition: the end offset), the stream ends once every partition reached it.
   */
  const consume = (start: ReadonlyMap<number, string>, stopAt: ReadonlyMap<number, string> | undefined, only?: ReadonlySet<number>) =>
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
              eachBatch: async ({ batch, heartbeat, pause }) => {
                const partition = batch.partition
                // A subscription to some partitions only: the others are paused at their first batch, unread.
                if (only !== undefined && !only.has(partition)) {
                  pause()
                  return
                }
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
      const only = options.partitions === undefined ? undefined : new Set(options.partitions)
      return consume(only === undefined ? state.next : new Map([...state.next].filter(([p]) => only.has(p))), undefined, only).pipe(
        Stream.filterMap(({ record, partition, offset }) => {
          position.set(partition, String(Number(offset) + 1))
          return !repeat(record, partition) && wanted(record)
            ? Result.succeed<Delivery>({ record, checkpoint: Checkpoints.kafkaWithSeen(position, state.seen) })
            : Result.failVoid
        })
      )
    }))

  return { read, subscribe, commit }
}
