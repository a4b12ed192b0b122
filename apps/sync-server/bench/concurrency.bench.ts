/**
 * `sync.concurrency`: how long the first full sync of many tenants takes, and how much memory
 * the server holds meanwhile, with every tenant's passes at once (what the engine did before
 * the setting worked) and with fewer slots. Each call waits a fixed latency at the simulator
 * (rate limits off), so the figure is the engine's parallelism, not the API's budget.
 *
 * The simulator runs as its own process; the engine, the log and the tenant store run here, on
 * SQLite files in a temporary folder. Figures are printed, never asserted.
 *
 *   ./ocs node apps/sync-server/bench/concurrency.bench.ts [--quick]
 */
import { Effect, Layer, Schedule } from "effect"
import * as Path from "node:path"
import { SqliteEventLog } from "@ocs/event-log"
import { Operation } from "@ocs/protocol"
import { SimulatorControl } from "@ocs/simulator"
import { SyncState } from "@ocs/sync"
import { Ownership } from "@ocs/sync/Ownership"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import { makeSealer } from "@ocs/tenant-store/Secrets"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import * as TenantState from "@ocs/tenant-store/TenantState"
import { startSimulatorProcess, tempDir } from "../test/processes.ts"
import { unlimitedClient } from "./unlimitedClient.ts"

export interface ConcurrencyRun {
  /** Undefined: no bound. */
  readonly concurrency: number | undefined
  readonly tenants: number
  readonly pages: number
  /** From start until every tenant's first full sync of product/list completed. */
  readonly seconds: number
  /** Highest heap in use sampled meanwhile (MiB). */
  readonly peakHeapMiB: number
}

const PAGE = 100

const runOne = (sim: { readonly url: string }, tenants: ReadonlyArray<{ readonly appId: string; readonly businessId: string; readonly accessToken: string }>, concurrency: number | undefined) => {
  const dir = tempDir("ocs-concurrency-bench-")
  const base = Layer.mergeAll(
    TenantState.layer({ filename: Path.join(dir, "tenants.sqlite"), sealer: makeSealer(Buffer.alloc(32, 9)) }),
    SqliteEventLog.layer({ filename: Path.join(dir, "events.sqlite") })
  )
  const client = unlimitedClient(sim.url)
  const layer = SyncEngine.layer({
    operations: [Operation.productList],
    intervalMs: 3_600_000,
    reconcileMs: 3_600_000,
    overlapMs: 0,
    horizonMs: 365 * 24 * 3600 * 1000,
    pageSize: PAGE,
    concurrency,
    superviseEveryMs: 50
  }).pipe(Layer.provide(client), Layer.provide(Ownership.layerAll), Layer.provideMerge(base))

  return Effect.gen(function*() {
    const registry = yield* TenantRegistry
    const states = yield* SyncState.SyncStateStore
    const sync = yield* SyncEngine
    for (const t of tenants) {
      yield* registry.upsertApp(t.appId, ["vt"])
      yield* registry.upsertBusiness({ appId: t.appId, businessId: t.businessId, accessToken: t.accessToken })
    }
    let peak = process.memoryUsage().heapUsed
    const started = performance.now()
    yield* sync.start
    const done = yield* states.states().pipe(
      Effect.tap(() => Effect.sync(() => void (peak = Math.max(peak, process.memoryUsage().heapUsed)))),
      Effect.repeat({ until: (all) => all.length === tenants.length && all.every((s) => s.fullCompletedAt !== null), schedule: Schedule.spaced("20 millis") })
    )
    const seconds = (performance.now() - started) / 1000
    return {
      concurrency,
      tenants: tenants.length,
      pages: done.reduce((n, s) => n + s.pages, 0),
      seconds,
      peakHeapMiB: Math.round(peak / 2 ** 20)
    } satisfies ConcurrencyRun
  }).pipe(Effect.scoped, Effect.provide(layer))
}

export const runConcurrencyBench = async (options: { readonly quick?: boolean } = {}): Promise<ReadonlyArray<ConcurrencyRun>> => {
  const count = options.quick ? 16 : 64
  const products = options.quick ? 300 : 1_000
  const sim = await startSimulatorProcess(["--products", "10"])
  const control = new SimulatorControl(sim.url)
  try {
    await control.setRateLimits({ enabled: false })
    await control.addFault({ kind: "latency", ms: 50, operation: "product/list" })
    const tenants = []
    for (let i = 0; i < count; i++) {
      const t = await control.createTenant({ products, orders: 0, bills: 0, customers: 0 })
      tenants.push({ appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken })
    }
    const runs: Array<ConcurrencyRun> = []
    // No bound (the default, and what the engine did before the setting worked), then fewer slots.
    for (const concurrency of [undefined, 16, 4]) runs.push(await Effect.runPromise(runOne(sim, tenants, concurrency)))
    return runs
  } finally {
    await sim.proc.stop("SIGTERM")
  }
}

if (import.meta.main) {
  const runs = await runConcurrencyBench({ quick: process.argv.includes("--quick") })
  for (const r of runs) {
    console.log(`concurrency ${String(r.concurrency ?? "none").padStart(4)}: ${r.tenants} tenants, ${r.pages} pages in ${r.seconds.toFixed(2)} s; peak heap ${r.peakHeapMiB} MiB`)
  }
}
