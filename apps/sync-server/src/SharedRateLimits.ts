/**
 * Rate-limit locks shared by several servers on one Kafka cluster (docs/architecture.md §4.19).
 *
 * A replicating adapter around the local rate-limit store: a lock this server receives (an
 * ERR_429 locks its `appId + businessId + URL` key until unlockedAt) is written locally, then
 * to the compacted topic `<topic>-rate-limits` keyed by the budget key; every server follows
 * the topic, writes the others' locks into its own store (so a restart still honours them)
 * and hands them to its rate limiter (`RateLimitStore.remoteLocks`), which holds every call
 * for that key until the lock ends, as if it had received the lock itself.
 *
 * Budgets (the calls inside each key's window) are not replicated call by call: one owner at a
 * time pulls a tenant (`Ownership`), and a server that takes a tenant over waits one window
 * (`handoverSeconds`) before its first call, so the previous owner's calls have left it.
 */
import { RateLimitStore } from "@ocs/transport"
import { Effect, Layer, Queue, Schema, Stream } from "effect"
import * as Crypto from "node:crypto"
import * as CompactedTopic from "./CompactedTopic.ts"

export interface Options {
  readonly brokers: ReadonlyArray<string>
  /** The compacted topic (created when absent). */
  readonly topic: string
  readonly partitions?: number | undefined
  readonly clientId?: string | undefined
}

const Lock = Schema.Struct({ v: Schema.Literal(1), origin: Schema.String, key: Schema.String, until: Schema.Number })
const decodeLock = Schema.decodeUnknownResult(Schema.fromJsonString(Lock))

/** `RateLimitStore` whose locks are shared through `options.topic`; needs the local store. */
export const layer = (options: Options): Layer.Layer<RateLimitStore.RateLimitStore, CompactedTopic.SharedStateUnavailable, RateLimitStore.RateLimitStore> =>
  Layer.effect(RateLimitStore.RateLimitStore, make(options))

export const make = Effect.fnUntraced(function*(options: Options) {
  const local = yield* RateLimitStore.RateLimitStore
  const origin = Crypto.randomUUID()
  const remote = yield* Queue.unbounded<RateLimitStore.RemoteLock>()

  const apply = (text: string) =>
    Effect.gen(function*() {
      const decoded = decodeLock(text)
      if (decoded._tag === "Failure") return yield* Effect.logWarning(`shared rate limits: a value that does not decode was skipped: ${decoded.failure.message}`)
      const lock = decoded.success
      if (lock.origin === origin) return
      // Kept locally first, so that the lock outlives a restart of this server too.
      yield* local.lock(lock.key, lock.until).pipe(Effect.catch((e) => Effect.logWarning("shared rate limits: lock not persisted here", e)))
      yield* Queue.offer(remote, { key: lock.key, until: lock.until })
    })

  const topic = yield* CompactedTopic.make({
    brokers: options.brokers,
    topic: options.topic,
    partitions: options.partitions,
    clientId: options.clientId ?? "ocs-rate-limits",
    origin,
    onValue: apply
  })

  const lock = (key: string, until: number) =>
    Effect.andThen(
      local.lock(key, until),
      topic.publish(key, JSON.stringify({ v: 1, origin, key, until })).pipe(
        Effect.catchTag("SharedStateUnavailable", (e) => Effect.logWarning(`${e.message}; the lock stays local`))
      )
    )

  return RateLimitStore.RateLimitStore.of({ ...local, lock, remoteLocks: Stream.fromQueue(remote) })
})
