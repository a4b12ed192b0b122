/**
 * Sync state shared by several servers on one Kafka cluster (docs/architecture.md §4.19).
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
import { Clock, Effect, Layer, Schema } from "effect"
import * as Crypto from "node:crypto"
import * as CompactedTopic from "./CompactedTopic.ts"
import { TenantStore } from "./TenantStore.ts"
import type { ResourceState } from "./TenantRows.ts"

export interface Options {
  readonly brokers: ReadonlyArray<string>
  /** The compacted topic (created when absent). */
  readonly topic: string
  readonly partitions?: number | undefined
  readonly clientId?: string | undefined
}

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
export const layer = (options: Options): Layer.Layer<TenantStore, CompactedTopic.SharedStateUnavailable, TenantStore> =>
  Layer.effect(TenantStore, make(options))

export const make = Effect.fnUntraced(function*(options: Options) {
  const local = yield* TenantStore
  const origin = Crypto.randomUUID()

  /** Per key, the newest change held (written here or applied from another server). */
  const held = new Map<string, { readonly at: number; readonly origin: string; readonly seq: number }>()
  let seq = 0

  const apply = (text: string) =>
    Effect.gen(function*() {
      const decoded = decodeChange(text)
      if (decoded._tag === "Failure") return yield* Effect.logWarning(`shared sync state: a value that does not decode was skipped: ${decoded.failure.message}`)
      const change = decoded.success
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

  const topic = yield* CompactedTopic.make({
    brokers: options.brokers,
    topic: options.topic,
    partitions: options.partitions,
    clientId: options.clientId ?? "ocs-sync-state",
    origin,
    onValue: apply
  })

  const publish = (appId: string, businessId: string, resource: string) =>
    Effect.gen(function*() {
      const state = yield* local.state(appId, businessId, resource)
      const change: Change = { v: 1, origin, seq: ++seq, at: yield* Clock.currentTimeMillis, appId, businessId, resource, state: sharedOf(state) }
      held.set(keyOf(appId, businessId, resource), change)
      yield* topic.publish(keyOf(appId, businessId, resource), JSON.stringify(change)).pipe(
        Effect.catchTag("SharedStateUnavailable", (e) => Effect.logWarning(`${e.message}; the change stays local`))
      )
    })

  const updateState: typeof local.updateState = (appId, businessId, resource, patch) =>
    Effect.andThen(local.updateState(appId, businessId, resource, patch), publish(appId, businessId, resource))

  return TenantStore.of({ ...local, updateState })
})
