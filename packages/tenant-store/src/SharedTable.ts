/**
 * What the tables several servers share on one Kafka cluster have in common (the tenant
 * registry, the sync state, the rate-limit locks; docs/architecture.md §4.19): a compacted
 * topic (`@ocs/event-log` CompactedTopic) read from the beginning before the server starts,
 * an origin id per process so that a server skips its own values, values that do not decode
 * skipped with a warning, and a publish that logs instead of failing when the broker is away
 * (the change stays on this server). For stamped values, changes to one key are ordered by
 * (generation, time, origin, sequence) and a value older than the newest held for its key is
 * ignored. The generation is the table's own order before arrival time (the tenant registry
 * gives a business change its token's issue time, so a grant outranks any later write of an
 * older token); a value without one is generation 0.
 */
import { Clock, Effect, type Result, type Scope } from "effect"
import * as Crypto from "node:crypto"
import { CompactedTopic } from "@ocs/event-log"

export interface Stamp {
  readonly v: 1
  readonly origin: string
  readonly seq: number
  readonly at: number
  readonly gen?: number | undefined
}

export interface Options<A extends { readonly origin: string }> {
  readonly brokers: ReadonlyArray<string>
  readonly topic: string
  readonly partitions?: number | undefined
  readonly clientId: string
  /** Names the table in log lines. */
  readonly label: string
  readonly decode: (text: string) => Result.Result<A, { readonly message: string }>
  /** For stamped values: the key whose changes are ordered (absent: every value is applied). */
  readonly orderKey?: ((value: A) => string) | undefined
  /** Applies a value another server published; must not fail. */
  readonly onRemote: (value: A) => Effect.Effect<void>
  /**
   * A value of another server older than the newest held for its key, read after it. The topic
   * keeps the last value per key, not the newest: the table may publish its newest again.
   */
  readonly onStale?: ((value: A) => Effect.Effect<void>) | undefined
}

export interface SharedTable {
  readonly origin: string
  /** A stamp for a change of `key` made here (of generation `gen`), held as the newest of the key unless a newer one is. */
  readonly stamp: (key: string, gen?: number) => Effect.Effect<Stamp>
  /** The generation of the newest change held for `key` (0 when none is held or it has none). */
  readonly generation: (key: string) => number
  /** Whether `stamp` is still the newest change held for `key`. */
  readonly isNewest: (key: string, stamp: Stamp) => boolean
  /** Publishes a value; when the broker does not take it, logs `stays` and goes on. */
  readonly publish: (key: string, value: unknown, stays: string) => Effect.Effect<void>
}

/** (gen, at, origin, seq) order of changes to one key. */
const newer = (a: Omit<Stamp, "v">, b: Omit<Stamp, "v">) =>
  (a.gen ?? 0) !== (b.gen ?? 0) ? (a.gen ?? 0) > (b.gen ?? 0)
  : a.at !== b.at ? a.at > b.at
  : a.origin !== b.origin ? a.origin > b.origin
  : a.seq > b.seq

export const make = <A extends { readonly origin: string }>(options: Options<A>): Effect.Effect<SharedTable, CompactedTopic.SharedStateUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    const origin = Crypto.randomUUID()
    /** Per key, the newest change held (written here or applied from another server). */
    const held = new Map<string, Omit<Stamp, "v">>()
    let seq = 0

    const onValue = (text: string) =>
      Effect.gen(function*() {
        const decoded = options.decode(text)
        if (decoded._tag === "Failure") return yield* Effect.logWarning(`${options.label}: a value that does not decode was skipped: ${decoded.failure.message}`)
        const value = decoded.success
        if (options.orderKey !== undefined) {
          const key = options.orderKey(value)
          const stamp = value as unknown as Stamp
          const current = held.get(key)
          if (current !== undefined && !newer(stamp, current)) {
            if (value.origin !== origin && options.onStale !== undefined) yield* options.onStale(value)
            return
          }
          held.set(key, stamp)
        }
        if (value.origin !== origin) yield* options.onRemote(value)
      })

    const topic = yield* CompactedTopic.make({
      brokers: options.brokers,
      topic: options.topic,
      partitions: options.partitions,
      clientId: options.clientId,
      origin,
      onValue
    })

    return {
      origin,
      stamp: (key, gen) =>
        Effect.map(Clock.currentTimeMillis, (at) => {
          const stamp: Stamp = gen === undefined ? { v: 1, origin, seq: ++seq, at } : { v: 1, origin, seq: ++seq, at, gen }
          // A newer change applied meanwhile (a higher generation) stays the newest held.
          const current = held.get(key)
          if (current === undefined || newer(stamp, current)) held.set(key, stamp)
          return stamp
        }),
      generation: (key) => held.get(key)?.gen ?? 0,
      isNewest: (key, stamp) => {
        const current = held.get(key)
        return current === undefined || (current.origin === stamp.origin && current.seq === stamp.seq) || newer(stamp, current)
      },
      publish: (key, value, stays) =>
        topic.publish(key, JSON.stringify(value)).pipe(
          Effect.catchTag("SharedStateUnavailable", (e) => Effect.logWarning(`${e.message}; ${stays}`))
        )
    }
  })
