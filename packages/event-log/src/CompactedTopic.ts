/**
 * A compacted Kafka topic as a shared table (docs/architecture.md §4.19): the newest value per
 * key is kept for ever, every server follows the topic from the beginning, and `make` returns
 * once what the topic held at start has been handed to `onValue`, so a server starts with the
 * state the others left. `publish` writes a value and waits for the broker's acks.
 *
 * The sync server's shared tables (tenants, sync state, rate-limit locks) ride on it in Kafka
 * mode with shared pulls. kafkajs is loaded only when one is made.
 */
import type { Consumer, Producer } from "kafkajs"
import { Deferred, Effect, Schedule, type Scope, Schema } from "effect"

export class SharedStateUnavailable extends Schema.TaggedError<SharedStateUnavailable>()("SharedStateUnavailable", {
  message: Schema.String
}) {}

export interface Options {
  readonly brokers: ReadonlyArray<string>
  readonly topic: string
  readonly partitions?: number | undefined
  readonly clientId: string
  /** Identifies this process's consumer (its own group: every server reads everything). */
  readonly origin: string
  /** Called with each value in topic order per partition; must not fail. */
  readonly onValue: (value: string) => Effect.Effect<void>
}

export interface CompactedTopic {
  readonly publish: (key: string, value: string) => Effect.Effect<void, SharedStateUnavailable>
}

export const make = Effect.fnUntraced(function*(options: Options): Effect.fn.Return<CompactedTopic, SharedStateUnavailable, Scope.Scope> {
  const unavailable = (what: string) => (cause: unknown) =>
    new SharedStateUnavailable({ message: `${options.topic}: ${what}: ${cause instanceof Error ? cause.message : String(cause)}` })

  const { Kafka, logLevel } = yield* Effect.promise(() => import("kafkajs"))
  const kafka = new Kafka({ brokers: [...options.brokers], clientId: options.clientId, logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  yield* Effect.acquireRelease(
    Effect.tryPromise({ try: () => admin.connect(), catch: unavailable("cannot reach the broker") }),
    () => Effect.promise(() => admin.disconnect().catch(() => undefined))
  )
  // Servers that start together race to create the topic; the loser can ask for offsets before
  // the partitions' leaders are known ("does not host this topic-partition"). That settles in
  // moments, so both steps are retried for about 11 s before the start fails.
  const ends = yield* Effect.gen(function*() {
    yield* Effect.tryPromise({
      try: () =>
        admin.createTopics({
          waitForLeaders: true,
          topics: [{
            topic: options.topic,
            numPartitions: options.partitions ?? 6,
            replicationFactor: 1,
            configEntries: [{ name: "cleanup.policy", value: "compact" }]
          }]
        }),
      catch: unavailable("cannot create the topic")
    })
    return yield* Effect.tryPromise({ try: () => admin.fetchTopicOffsets(options.topic), catch: unavailable("no offsets") })
  }).pipe(Effect.retry({ schedule: Schedule.exponential("100 millis", 1.5), times: 10 }))

  const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  yield* Effect.acquireRelease(
    Effect.tryPromise({ try: () => producer.connect(), catch: unavailable("refused the producer") }),
    () => Effect.promise(() => producer.disconnect().catch(() => undefined))
  )

  // Ready once the end offsets seen at start have been read.
  const caughtUp = yield* Deferred.make<void>()
  const remaining = new Map(ends.filter((e) => Number(e.high) > Number(e.low)).map((e) => [e.partition, Number(e.high)] as const))
  if (remaining.size === 0) yield* Deferred.succeed(caughtUp, undefined)
  const consumer: Consumer = kafka.consumer({ groupId: `${options.clientId}-${options.origin}`, maxWaitTimeInMs: 100 })
  yield* Effect.acquireRelease(
    Effect.tryPromise({ try: () => consumer.connect(), catch: unavailable("refused the consumer") }),
    () => Effect.promise(() => consumer.disconnect().catch(() => undefined))
  )
  yield* Effect.tryPromise({
    try: async () => {
      await consumer.subscribe({ topic: options.topic, fromBeginning: true })
      await consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch, heartbeat }) => {
          for (const message of batch.messages) {
            if (message.value !== null) await Effect.runPromise(options.onValue(message.value.toString("utf8")))
            const end = remaining.get(batch.partition)
            if (end !== undefined && Number(message.offset) + 1 >= end) {
              remaining.delete(batch.partition)
              if (remaining.size === 0) Effect.runSync(Deferred.succeed(caughtUp, undefined))
            }
          }
          await heartbeat()
        }
      })
    },
    catch: unavailable("cannot follow the topic")
  })
  yield* Deferred.await(caughtUp)

  return {
    publish: (key, value) =>
      Effect.asVoid(Effect.tryPromise({
        try: () => producer.send({ topic: options.topic, acks: -1, messages: [{ key, value }] }),
        catch: unavailable("did not take a change")
      }))
  }
})
