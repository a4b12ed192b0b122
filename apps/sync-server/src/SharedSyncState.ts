/**
 * Sync state shared by several servers on one Kafka cluster (docs/architecture.md §4.15).
 *
 * A replicating adapter around the tenant store: it provides `TenantStore` over the local one,
 * and every change of a resource's sync state made here (cursor of a running full sync, its
 * window, the incremental bound, when it last ran, its last error) is also written to a
 * compacted topic, keyed `appId:businessId:resource`, holding the whole state. Every server
 * follows that topic from the beginning (read to its end before the server starts pulling)
 * and writes the changes of the other servers into its own store. So a server that takes a
 * tenant over (`Ownership`) reads the previous owner's cursor from its own file and resumes
 * there instead of starting the full sync again from the first page.
 *
 * - The local write comes first and is what the sync engine relies on; the topic write is
 *   awaited (acks from all in-sync replicas) before the engine goes on, so the cursor a crash
 *   leaves behind is on the topic. When the broker does not answer, the change stays local and
 *   is logged: the tenant keeps syncing; a takeover then repeats pages, which the log dedupes.
 * - Changes are ordered per key by (time, origin sequence); a change older than what a server
 *   already holds for the key is ignored. Only the owner of a tenant writes its state.
 * - Page and record counters stay per server (they count what each server fetched).
 * - No secret goes to this topic: sync state holds no token.
 */
import type { Consumer, Producer } from "kafkajs"
import { Clock, Deferred, Effect, Layer, Schema } from "effect"
import * as Crypto from "node:crypto"
import { TenantStore, TenantStoreError } from "./TenantStore.ts"
import type { ResourceState } from "./TenantRows.ts"

export interface Options {
  readonly brokers: ReadonlyArray<string>
  /** The compacted topic (created when absent). */
  readonly topic: string
  readonly partitions?: number | undefined
  readonly clientId?: string | undefined
}

export class SharedStateUnavailable extends Schema.TaggedError<SharedStateUnavailable>()("SharedStateUnavailable", {
  message: Schema.String
}) {}

/** The replicated part of a resource's state. */
const Shared = Schema.Struct({
  cursor: Schema.NullOr(Schema.String),
  fullStartedAt: Schema.NullOr(Schema.Number),
  fullCompletedAt: Schema.NullOr(Schema.Number),
  windowEnd: Schema.NullOr(Schema.Number),
  incrementalBound: Schema.NullOr(Schema.Number),
  lastRunAt: Schema.NullOr(Schema.Number),
  lastError: Schema.NullOr(Schema.String)
})

const Change = Schema.Struct({
  v: Schema.Literal(1),
  origin: Schema.String,
  seq: Schema.Number,
  at: Schema.Number,
  appId: Schema.String,
  businessId: Schema.String,
  resource: Schema.String,
  state: Shared
})
type Change = typeof Change.Type
const decodeChange = Schema.decodeUnknownResult(Schema.fromJsonString(Change))

const sharedOf = (s: ResourceState): typeof Shared.Type => ({
  cursor: s.cursor,
  fullStartedAt: s.fullStartedAt,
  fullCompletedAt: s.fullCompletedAt,
  windowEnd: s.windowEnd,
  incrementalBound: s.incrementalBound,
  lastRunAt: s.lastRunAt,
  lastError: s.lastError
})

const keyOf = (appId: string, businessId: string, resource: string) => `${appId}:${businessId}:${resource}`

/** (at, origin, seq) order of changes to one key. */
const newer = (a: { readonly at: number; readonly origin: string; readonly seq: number }, b: { readonly at: number; readonly origin: string; readonly seq: number }) =>
  a.at !== b.at ? a.at > b.at : a.origin !== b.origin ? a.origin > b.origin : a.seq > b.seq

/** `TenantStore` whose sync state is shared through `options.topic`; needs the local store. */
export const layer = (options: Options): Layer.Layer<TenantStore, SharedStateUnavailable, TenantStore> =>
  Layer.effect(TenantStore, make(options))

export const make = Effect.fnUntraced(function*(options: Options) {
  const local = yield* TenantStore
  const origin = Crypto.randomUUID()
  const unavailable = (what: string) => (cause: unknown) =>
    new SharedStateUnavailable({ message: `shared sync state on ${options.topic}: ${what}: ${cause instanceof Error ? cause.message : String(cause)}` })

  const { Kafka, logLevel } = yield* Effect.promise(() => import("kafkajs"))
  const kafka = new Kafka({ brokers: [...options.brokers], clientId: options.clientId ?? "ocs-sync-state", logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  yield* Effect.acquireRelease(
    Effect.tryPromise({ try: () => admin.connect(), catch: unavailable("cannot reach the broker") }),
    () => Effect.promise(() => admin.disconnect().catch(() => undefined))
  )
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
  const ends = yield* Effect.tryPromise({ try: () => admin.fetchTopicOffsets(options.topic), catch: unavailable("no offsets") })

  const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  yield* Effect.acquireRelease(
    Effect.tryPromise({ try: () => producer.connect(), catch: unavailable("refused the producer") }),
    () => Effect.promise(() => producer.disconnect().catch(() => undefined))
  )

  /** Per key, the newest change held (written here or applied from another server). */
  const held = new Map<string, { readonly at: number; readonly origin: string; readonly seq: number }>()
  let seq = 0

  const apply = (change: Change) =>
    Effect.gen(function*() {
      const key = keyOf(change.appId, change.businessId, change.resource)
      const current = held.get(key)
      if (current !== undefined && !newer(change, current)) return
      held.set(key, change)
      if (change.origin === origin) return
      yield* local.updateState(change.appId, change.businessId, change.resource, change.state).pipe(
        // A tenant this server does not know (not registered here yet): nothing to resume.
        Effect.catchTag("TenantStoreError", (e) => Effect.logDebug(`shared sync state: ${key} not applied: ${e.message}`))
      )
    })

  // Follow the topic from the beginning; the layer is ready once the ends seen at start are read.
  const caughtUp = yield* Deferred.make<void>()
  const remaining = new Map(ends.filter((e) => Number(e.high) > Number(e.low)).map((e) => [e.partition, Number(e.high)] as const))
  if (remaining.size === 0) yield* Deferred.succeed(caughtUp, undefined)
  const consumer: Consumer = kafka.consumer({ groupId: `${options.clientId ?? "ocs-sync-state"}-${origin}`, maxWaitTimeInMs: 100 })
  yield* Effect.acquireRelease(
    Effect.tryPromise({ try: () => consumer.connect(), catch: unavailable("refused the consumer") }),
    () => Effect.promise(() => consumer.disconnect().catch(() => undefined))
  )
  yield* Effect.tryPromise({
    try: async () => {
      await consumer.subscribe({ topic: options.topic, fromBeginning: true })
      await consumer.run({
        autoCommit: false,
        eachBatch: async ({ batch }) => {
          for (const message of batch.messages) {
            const decoded = message.value === null ? undefined : decodeChange(message.value.toString("utf8"))
            if (decoded !== undefined && decoded._tag === "Success") await Effect.runPromise(apply(decoded.success))
            const end = remaining.get(batch.partition)
            if (end !== undefined && Number(message.offset) + 1 >= end) {
              remaining.delete(batch.partition)
              if (remaining.size === 0) Effect.runSync(Deferred.succeed(caughtUp, undefined))
            }
          }
        }
      })
    },
    catch: unavailable("cannot follow the topic")
  })
  yield* Deferred.await(caughtUp)

  const publish = (appId: string, businessId: string, resource: string) =>
    Effect.gen(function*() {
      const state = yield* local.state(appId, businessId, resource)
      const change: Change = { v: 1, origin, seq: ++seq, at: yield* Clock.currentTimeMillis, appId, businessId, resource, state: sharedOf(state) }
      held.set(keyOf(appId, businessId, resource), change)
      yield* Effect.tryPromise({
        try: () => producer.send({ topic: options.topic, acks: -1, messages: [{ key: keyOf(appId, businessId, resource), value: JSON.stringify(change) }] }),
        catch: unavailable("did not take a change")
      }).pipe(Effect.catchTag("SharedStateUnavailable", (e) => Effect.logWarning(`${e.message}; the change stays local`)))
    })

  const updateState: typeof local.updateState = (appId, businessId, resource, patch) =>
    local.updateState(appId, businessId, resource, patch).pipe(
      Effect.andThen(publish(appId, businessId, resource)),
      Effect.mapError((e) => e instanceof TenantStoreError ? e : new TenantStoreError({ message: String(e) }))
    )

  return TenantStore.of({ ...local, updateState })
})
