/**
 * The sync engine over real parts, for the tests of how it behaves inside the server: tenant
 * state and the event log in SQLite files of `dir`, the API client against the simulator (two
 * attempts, a short backoff, rate-limit locks in memory), every tenant owned by this process.
 * The state and the log (and, when asked, the read models) stay in the layer's output, so a
 * test can register tenants and read what was synced.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Layer } from "effect"
import * as Path from "node:path"
import { SqliteEventLog } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import type { RunningSimulator } from "@ocs/simulator"
import { Ownership } from "@ocs/sync/Ownership"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import { makeSealer } from "@ocs/tenant-store/Secrets"
import * as TenantState from "@ocs/tenant-store/TenantState"
import { CommerceClient, RateLimiter, RateLimitStore, TransportEvents } from "@ocs/transport"

/** The API client against the simulator: two attempts, a short backoff, rate-limit locks in memory. */
export const simulatorClient = (sim: RunningSimulator) =>
  CommerceClient.CommerceClient.layer({ posBaseUrl: sim.posBaseUrl, vpageBaseUrl: sim.vpageBaseUrl, maxAttempts: 2, backoffBaseMs: 10 }).pipe(
    Layer.provide(RateLimiter.RateLimiter.layer().pipe(Layer.provide(RateLimitStore.RateLimitStore.layerMemory), Layer.provide(TransportEvents.TransportEvents.layerLog))),
    Layer.provide(TransportEvents.TransportEvents.layerLog),
    Layer.provide(NodeHttpClient.layerUndici)
  )

/** The tenant state and the event log, in SQLite files of `dir`. */
export const storesLayer = (dir: string) =>
  Layer.mergeAll(
    TenantState.layer({ filename: Path.join(dir, "tenants.sqlite"), sealer: makeSealer(Buffer.alloc(32, 7)) }),
    SqliteEventLog.layer({ filename: Path.join(dir, "events.sqlite") })
  )

/** `storesLayer` and the read models, also in a file of `dir`. */
export const storesWithReadModels = (dir: string) => Layer.merge(storesLayer(dir), ReadModels.ReadModels.layer({ filename: Path.join(dir, "read-models.sqlite") }))

/** The engine over `stores`, which stay in the layer's output. */
export const engineOver = <ROut, E>(stores: Layer.Layer<ROut, E>, sim: RunningSimulator, engine: Parameters<typeof SyncEngine.layer>[0]) =>
  SyncEngine.layer(engine).pipe(
    Layer.provide(simulatorClient(sim)),
    Layer.provide(Ownership.layerAll),
    Layer.provideMerge(stores)
  )

export const engineLayer = (dir: string, sim: RunningSimulator, engine: Parameters<typeof SyncEngine.layer>[0]) => engineOver(storesLayer(dir), sim, engine)
