/**
 * Sync state shared by several servers on one Kafka cluster (docs/architecture.md §4.19).
 *
 * A replicating adapter of the sync state: it provides `SyncStateStore` (`@ocs/sync`) over the
 * local one, and every change of a resource's sync state made here (cursor of a running full sync, its
 * window, the incremental bound, when it last ran, its last error) is also written to a
 * compacted topic, keyed `appId:businessId:resource`, holding the whole state. Every server
 * follows that topic from the beginning (read to its end before the server starts pulling)
 * and writes the changes of the other servers into its own store. So a server that takes a
 * tenant over (`Ownership`) reads the previous owner's cursor from its own file and resumes
 * there instead of starting the full sync again from the first page.
 *
 * - The local write comes first and is what the sync engine relies on. A change goes to the
 *   topic only once every outbox record written before it is on the event topic
 *   (`KafkaEventLog.RelayProgress`): when the relay is already there it is sent and awaited
 *   (acks from all in-sync replicas) before the engine goes on; otherwise it waits in memory
 *   (the newest per key) and a background fiber sends it when the relay gets there. So no
 *   server resumes past a page that is still on a dead server's disk only. When the broker
 *   does not answer, the change stays local and is logged: the tenant keeps syncing; a
 *   takeover then repeats pages, which the log dedupes.
 * - Changes are ordered per key by (time, origin sequence); a change older than what a server
 *   already holds for the key is ignored. Only the owner of a tenant writes its state.
 * - Page and record counters stay per server (they count what each server fetched).
 * - No secret goes to this topic: sync state holds no token.
 */
import { Deferred, Effect, Layer, Schema } from "effect"
import { type CompactedTopic, KafkaEventLog } from "@ocs/event-log"
import { Ids } from "@ocs/protocol"
import { SyncState } from "@ocs/sync"
import * as SharedTable from "./SharedTable.ts"

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

const sharedOf = (s: SyncState.ResourceState): typeof Shared.Type => ({
  cursor: s.cursor,
  fullStartedAt: s.fullStartedAt,
  fullCompletedAt: s.fullCompletedAt,
  windowEnd: s.windowEnd,
  incrementalBound: s.incrementalBound,
  lastRunAt: s.lastRunAt,
  lastError: s.lastError
})

const keyOf = (appId: string, businessId: string, resource: string) => `${Ids.tenantKey({ appId, businessId })}:${resource}`

/** `SyncStateStore` shared through `options.topic`; needs the local store. */
export const layer = (
  options: Options
): Layer.Layer<SyncState.SyncStateStore, CompactedTopic.SharedStateUnavailable, SyncState.SyncStateStore | KafkaEventLog.RelayProgress> =>
  Layer.effect(SyncState.SyncStateStore, make(options))

export const make = Effect.fnUntraced(function*(options: Options) {
  const local = yield* SyncState.SyncStateStore

  const table = yield* SharedTable.make<Change>({
    brokers: options.brokers,
    topic: options.topic,
    partitions: options.partitions,
    clientId: options.clientId ?? "ocs-sync-state",
    label: "shared sync state",
    decode: decodeChange,
    orderKey: (c) => keyOf(c.appId, c.businessId, c.resource),
    onRemote: (c) =>
      local.update(c.appId, c.businessId, c.resource, c.state).pipe(
        // A tenant this server does not know (not registered here yet): nothing to resume.
        Effect.catchTag("SyncStateUnavailable", (e) => Effect.logDebug(`shared sync state: ${keyOf(c.appId, c.businessId, c.resource)} not applied: ${e.message}`))
      )
  })
  const send = (change: Change) => table.publish(keyOf(change.appId, change.businessId, change.resource), change, "the change stays local")

  // A state goes out only once the outbox records written before it are on the event topic:
  // a cursor past a page must not reach another server before the page does, or a takeover
  // after this server dies resumes past a page that is on this server's disk only (found by
  // the takeover test: one page of five products missing on the survivor).
  const relay = yield* KafkaEventLog.RelayProgress
  const pending = new Map<string, { readonly change: Change; readonly needs: number }>()
  let wake = yield* Deferred.make<void>()
  const flush = Effect.gen(function*() {
    const relayed = yield* relay.relayed
    for (const [key, p] of pending) {
      if (p.needs > relayed) continue
      pending.delete(key)
      yield* send(p.change)
    }
  })
  yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
    if (pending.size === 0) {
      yield* Deferred.await(wake)
      wake = yield* Deferred.make<void>()
    }
    yield* flush
    if (pending.size > 0) yield* Effect.sleep("10 millis")
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("shared sync state: publishing failed; retrying", cause)))))

  const publish = (appId: string, businessId: string, resource: string) =>
    Effect.gen(function*() {
      const state = yield* local.state(appId, businessId, resource)
      const key = keyOf(appId, businessId, resource)
      const change: Change = { ...(yield* table.stamp(key)), appId, businessId, resource, state: sharedOf(state) }
      const needs = yield* relay.head.pipe(Effect.catch((e) =>
        Effect.as(Effect.logWarning(`shared sync state: outbox head unknown (${e.message}); publishing at once`), 0)))
      if (needs <= (yield* relay.relayed) && !pending.has(key)) return yield* send(change)
      // A newer change of a key replaces the one waiting: it needs at least as much relayed.
      pending.set(key, { change, needs })
      yield* Deferred.succeed(wake, undefined)
    })

  return SyncState.SyncStateStore.of({
    state: local.state,
    states: local.states,
    pause: local.pause,
    update: (appId, businessId, resource, patch) => Effect.andThen(local.update(appId, businessId, resource, patch), publish(appId, businessId, resource))
  })
})
