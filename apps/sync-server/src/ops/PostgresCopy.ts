/**
 * `readModels.store: postgres` (docs/architecture.md §4.34, docs/postgres.md): the server also
 * projects the log into a PostgreSQL schema, and the admin API's read routes (so the console)
 * answer from it. The SQLite file stays: plugins, commands, quarantine release and change
 * detection keep reading and writing it, and its change relay appends the `changes` records the
 * PostgreSQL copy then projects like any record (its own detection is off, so a change is found
 * once, by the file). The client is loaded only when this runs: the SQLite default never loads it.
 */
import { ReadModelsOptions } from "@ocs/read-models"
import type { ReadApi } from "@ocs/read-models"
import { LoopHealth } from "@ocs/observability/LoopHealth"
import { Effect, Fiber, Scope } from "effect"

/** The PostgreSQL copy's consumer: its checkpoint lives in the PostgreSQL schema, beside the rows. */
export const CONSUMER = "read-models-postgres"

/**
 * Opens the store (creating and migrating its schema), follows the log into it under the
 * `projection-postgres` loop, and returns the read API over it. Fails when PostgreSQL cannot be
 * reached at start, so a wrong URL shows at once.
 */
export const start = (settings: ReadModelsOptions.PostgresSection) =>
  Effect.gen(function*() {
    const { PostgresReadApi, PostgresStore } = yield* Effect.promise(() => import("@ocs/read-models/postgres"))
    const store = yield* PostgresStore.make({ url: settings.url, schema: settings.schema, pool: settings.pool, detectChanges: false })
    const health = yield* LoopHealth
    const scope = yield* Scope.Scope
    yield* Effect.forkIn(health.supervise("projection-postgres", Effect.scoped(Effect.flatMap(store.run(CONSUMER), Fiber.join))), scope)
    yield* Effect.logInfo(`read models: also projected into PostgreSQL schema ${store.schema}; the admin read routes answer from it`)
    return PostgresReadApi.make(store) satisfies ReadApi.ReadApi
  })
