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
 * Budgets are shared the same way: the completion times of this server's calls inside each
 * key's window are published (at most every `callsPublishMillis`, one message per key with
 * calls since the last, key `calls:<origin>:<budget key>`, so compaction keeps each server's
 * newest list per key); every other server counts them in that key's window
 * (`RateLimitStore.remoteCalls`), so calls counted by one server reduce the budget the others
 * see. A call counts elsewhere once it has completed and been published: the owner of a
 * tenant (`Ownership`) makes nearly all of its calls, and a server that takes a tenant over
 * still waits one window (`handoverSeconds`) before its first call.
 */
import { RateLimitStore } from "@ocs/transport"
import { Clock, Effect, Layer, Queue, Schedule, Schema, Stream } from "effect"
import type { CompactedTopic } from "@ocs/event-log"
import * as SharedTable from "./SharedTable.ts"

export interface Options {
  readonly brokers: ReadonlyArray<string>
  /** The compacted topic (created when absent). */
  readonly topic: string
  readonly partitions?: number | undefined
  readonly clientId?: string | undefined
  /** How often this server's new calls are published (default 200 ms). */
  readonly callsPublishMillis?: number | undefined
}

const Lock = Schema.Struct({ v: Schema.Literal(1), origin: Schema.String, key: Schema.String, until: Schema.Number })
/** One server's calls for one key still inside the window when published (completion times, ms). */
const Calls = Schema.Struct({
  v: Schema.Literal(2),
  origin: Schema.String,
  key: Schema.String,
  limit: Schema.Number,
  windowMs: Schema.Number,
  at: Schema.Array(Schema.Number)
})
const decodeValue = Schema.decodeUnknownResult(Schema.fromJsonString(Schema.Union([Lock, Calls])))

/** `RateLimitStore` whose locks are shared through `options.topic`; needs the local store. */
export const layer = (options: Options): Layer.Layer<RateLimitStore.RateLimitStore, CompactedTopic.SharedStateUnavailable, RateLimitStore.RateLimitStore> =>
  Layer.effect(RateLimitStore.RateLimitStore, make(options))

export const make = Effect.fnUntraced(function*(options: Options) {
  const local = yield* RateLimitStore.RateLimitStore
  const remote = yield* Queue.unbounded<RateLimitStore.RemoteLock>()
  const remoteCalls = yield* Queue.unbounded<RateLimitStore.RemoteCall>()
  /** Per other server and key, the newest call time already counted. */
  const counted = new Map<string, number>()

  const apply = (value: typeof Lock.Type | typeof Calls.Type) =>
    Effect.gen(function*() {
      if (value.v === 2) {
        // Each message repeats the calls still in the window: count only the new ones.
        const id = `${value.origin}:${value.key}`
        const after = counted.get(id) ?? -Infinity
        const fresh = value.at.filter((at) => at > after)
        if (fresh.length === 0) return
        counted.set(id, Math.max(...fresh))
        yield* Queue.offerAll(remoteCalls, fresh.map((at) => ({ key: value.key, limit: value.limit, windowMs: value.windowMs, at })))
        return
      }
      const lock = value
      // Kept locally first, so that the lock outlives a restart of this server too.
      yield* local.lock(lock.key, lock.until).pipe(Effect.catch((e) => Effect.logWarning("shared rate limits: lock not persisted here", e)))
      yield* Queue.offer(remote, { key: lock.key, until: lock.until })
    })

  const table = yield* SharedTable.make({
    brokers: options.brokers,
    topic: options.topic,
    partitions: options.partitions,
    clientId: options.clientId ?? "ocs-rate-limits",
    label: "shared rate limits",
    decode: decodeValue,
    onRemote: apply
  })
  const origin = table.origin

  const lock = (key: string, until: number) =>
    Effect.andThen(
      local.lock(key, until),
      table.publish(key, { v: 1, origin, key, until }, "the lock stays local")
    )

  // This server's calls: grants remembered by id until their completion is written.
  const granted = new Map<number, RateLimitStore.Grant>()
  const mine = new Map<string, { readonly limit: number; readonly windowMs: number; at: Array<number>; changed: boolean }>()
  const write = (batch: RateLimitStore.Batch) =>
    Effect.andThen(
      local.write(batch),
      Effect.sync(() => {
        for (const g of batch.grants) granted.set(g.id, g)
        for (const c of batch.completions) {
          const g = granted.get(c.id)
          if (g === undefined) continue
          granted.delete(c.id)
          const calls = mine.get(g.key) ?? { limit: g.limit, windowMs: g.windowMs, at: [], changed: false }
          calls.at.push(c.at)
          calls.changed = true
          mine.set(g.key, calls)
        }
      })
    )
  const publishCalls = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    // A grant whose completion never came (the call was not sent) is forgotten in time.
    for (const [id, g] of granted) if (g.at < now - RateLimitStore.MAX_CALL_MS) granted.delete(id)
    for (const [key, calls] of mine) {
      calls.at = calls.at.filter((at) => at > now - calls.windowMs - 1)
      if (!calls.changed) {
        if (calls.at.length === 0) mine.delete(key)
        continue
      }
      calls.changed = false
      yield* table.publish(`calls:${origin}:${key}`, { v: 2, origin, key, limit: calls.limit, windowMs: calls.windowMs, at: calls.at }, "these calls count here only")
    }
  })
  yield* Effect.forkScoped(Effect.schedule(publishCalls, Schedule.spaced(options.callsPublishMillis ?? 200)))

  return RateLimitStore.RateLimitStore.of({
    ...local,
    lock,
    write,
    remoteLocks: Stream.fromQueue(remote),
    remoteCalls: Stream.fromQueue(remoteCalls)
  })
})
