/**
 * The Kafka log's client: kafkajs loaded (by the Kafka mode only), the admin connection held
 * for the log's scope, the topic created when missing. A broker that does not answer at start
 * is a typed error (`KafkaUnavailable`).
 */
import type { Admin, Kafka } from "kafkajs"
import { Effect, Schedule, type Scope } from "effect"
import { KafkaUnavailable } from "../EventLogError.ts"
import type { Options } from "./kafkaOptions.ts"

export interface KafkaClient {
  readonly kafka: Kafka
  /** Connected while the scope is open. */
  readonly admin: Admin
  readonly topic: string
  readonly clientId: string
  /** A failure of the broker doing `what`, as a `KafkaUnavailable`. */
  readonly unavailable: (what: string) => (cause: unknown) => KafkaUnavailable
}

export const connect = Effect.fnUntraced(function*(options: Options): Effect.fn.Return<KafkaClient, KafkaUnavailable, Scope.Scope> {
  const brokers = [...options.brokers]
  const topic = options.topic
  const clientId = options.clientId ?? "ocs-event-log"
  const unavailable = (what: string) => (cause: unknown) =>
    new KafkaUnavailable({
      brokers,
      message: `Kafka at ${brokers.join(",")} ${what}: ${cause instanceof Error ? cause.message : String(cause)}`,
      cause
    })

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
  }).pipe(
    // A topic just created (here, or by another server at the same moment) can be missing from
    // the broker's metadata for a moment ("does not host this topic-partition"): errors kafkajs
    // marks retriable are tried again before the start fails.
    Effect.retry({ schedule: Schedule.exponential("100 millis", 1.5), times: 10, while: (e) => retriable(e.cause) })
  )

  return { kafka, admin, topic, clientId, unavailable }
})

/** Whether kafkajs marks the error (or one it wraps) as worth another try. */
const retriable = (cause: unknown, depth = 0): boolean =>
  depth < 4 && typeof cause === "object" && cause !== null &&
  ((cause as { readonly retriable?: unknown }).retriable === true || retriable((cause as { readonly cause?: unknown }).cause, depth + 1))
