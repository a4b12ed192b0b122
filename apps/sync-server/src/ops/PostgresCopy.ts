/**
 * `readModels.store: postgres` (docs/architecture.md §4.34, docs/postgres.md): the server also
 * projects the log into a PostgreSQL schema, and the admin API's read routes (so the console)
 * answer from it. The SQLite file stays: plugins, commands, quarantine release and change
 * detection keep reading and writing it, and its change relay appends the `changes` records the
 * PostgreSQL copy then projects like any record (its own detection is off, so a change is found
 * once, by the file). The client is loaded only when this runs: the SQLite default never loads it.
 */
import { PartitionOwnership } from "@ocs/event-log"
import { ReadModelsOptions } from "@ocs/read-models"
import type { ReadApi } from "@ocs/read-models"
import { LoopHealth } from "@ocs/observability/LoopHealth"
import { Effect, Fiber, Scope } from "effect"

/** The PostgreSQL copy's consumer: its checkpoint lives in the PostgreSQL schema, beside the rows. */
export const CONSUMER = "read-models-postgres"

/** Kafka mode: the event topic's brokers and name, and its partitions (as the event log creates it, default 6). */
export interface SharedOptions {
  readonly brokers: ReadonlyArray<string>
  readonly topic: string
  readonly partitions?: number | undefined
  /** How long a partition gained waits for its previous owner; the fence keeps it correct either way. Default 2 s. */
  readonly handoverMs?: number | undefined
  /** How long the group waits for a silent server before moving its partitions. Default 10 s. */
  readonly sessionTimeoutMs?: number | undefined
}

/** How often the Kafka-mode loop looks at the partitions it owns. */
const OWNERSHIP_POLL = "500 millis"

/**
 * Opens the store (creating and migrating its schema), follows the log into it under the
 * `projection-postgres` loop, and returns the read API over it. Fails when PostgreSQL cannot be
 * reached at start, so a wrong URL shows at once.
 *
 * Kafka mode (`shared`): the servers share one copy. They join the consumer group
 * `<topic>-read-models-postgres` (PartitionOwnership, one ownership partition per partition of
 * the event topic); each projects the partitions the group gives it (`runPartitions`: a
 * checkpoint row per partition, fenced, in the transaction of the rows), and starts again on its
 * new set whenever the set changes. A server that dies leaves the group after the session
 * timeout; the next owner resumes from the checkpoints in PostgreSQL.
 */
export const start = (settings: ReadModelsOptions.PostgresSection, shared?: SharedOptions) =>
  Effect.gen(function*() {
    const { PostgresReadApi, PostgresStore } = yield* Effect.promise(() => import("@ocs/read-models/postgres"))
    const store = yield* PostgresStore.make({ url: settings.url, schema: settings.schema, pool: settings.pool, detectChanges: false })
    const health = yield* LoopHealth
    const scope = yield* Scope.Scope
    if (shared === undefined) {
      yield* Effect.forkIn(health.supervise("projection-postgres", Effect.scoped(Effect.flatMap(store.run(CONSUMER), Fiber.join))), scope)
    } else {
      const group = yield* PartitionOwnership.make({
        brokers: shared.brokers,
        topic: `${shared.topic}-read-models-postgres`,
        partitions: shared.partitions ?? 6,
        // The event topic may have been made with more partitions than configured: each gets an owner.
        partitionsOf: shared.topic,
        handoverMs: shared.handoverMs ?? 2000,
        sessionTimeoutMs: shared.sessionTimeoutMs,
        clientId: "ocs-read-models-postgres"
      })
      const owned = () => Array.from({ length: group.partitions }, (_, p) => p).filter(group.owns)
      const same = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => a.length === b.length && a.every((p, i) => p === b[i])
      const changed = (from: ReadonlyArray<number>) =>
        Effect.repeat(Effect.sleep(OWNERSHIP_POLL), { until: () => !same(owned(), from) })
      // One round: project the partitions owned now until the set changes (or the run fails).
      const round = Effect.suspend(() => {
        const mine = owned()
        if (mine.length === 0) return changed(mine)
        return Effect.scoped(Effect.gen(function*() {
          yield* Effect.logInfo(`read models: projecting partitions ${mine.join(", ")} into PostgreSQL`)
          const run = yield* store.runPartitions(CONSUMER, mine)
          yield* Effect.raceFirst(Fiber.join(run), changed(mine))
        }))
      })
      yield* Effect.forkIn(health.supervise("projection-postgres", Effect.forever(round)), scope)
    }
    yield* Effect.logInfo(`read models: also projected into PostgreSQL schema ${store.schema}; the admin read routes answer from it`)
    return PostgresReadApi.make(store) satisfies ReadApi.ReadApi
  })
