/**
 * One reconciliation of a tenant's products (100,000; 5,000 with --quick): a full pass of
 * product/list after the baseline, with a few silent edits and deletes, then the projection
 * comparing every record with the copy, relaying the changes found and applying them
 * (docs/architecture.md §4.14). Reported beside the API's own budget for that many pages:
 * product/list answers at most 100 records a page, and a tenant may call one URL 150 times per
 * 30 s (docs/api-catalogue.md), so the service itself lets the pass go no faster than that.
 * Our limiter is opened for the run, so the figure is the engine's cost, not the budget's.
 *
 * The simulator runs as its own process (rate limits off); the engine, log and read models
 * run here, on SQLite files in a temporary folder.
 *
 *   ./ocs node apps/sync-server/bench/reconciliation.bench.ts [--quick]
 */
import { Effect, Layer, Option, Stream } from "effect"
import * as Path from "node:path"
import { EventLog, SqliteEventLog } from "@ocs/event-log"
import { DomainEvent, EngineRecord, Operation } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { SimulatorControl } from "@ocs/simulator"
import { makeSealer } from "@ocs/tenant-store/Secrets"
import { Ownership } from "@ocs/sync/Ownership"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import * as TenantState from "@ocs/tenant-store/TenantState"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { startSimulatorProcess, tempDir } from "../test/processes.ts"
import { unlimitedClient } from "./unlimitedClient.ts"

export interface ReconciliationBench {
  /** Products the tenant was seeded with, and those product/list serves (the copy). */
  readonly products: number
  readonly served: number
  readonly edits: number
  readonly deletes: number
  /** Calls (pages) of the reconciliation pass. */
  readonly calls: number
  /** The pass: pages fetched and appended to the log. */
  readonly passSeconds: number
  /** The projection: every record compared with the copy, changes relayed and applied. */
  readonly projectSeconds: number
  readonly totalSeconds: number
  /** Changes the reconciliation found (updates + deletions). */
  readonly changesFound: number
  /** The least time the API's budget allows for `calls` pages (150 calls per 30 s per URL). */
  readonly budgetSeconds: number
  /** Records the pass added to the log (pages, seen-again notes, the completion, changes). */
  readonly logRecordsAdded: number
}

const PAGE = 100
const BUDGET = { requests: 150, windowSeconds: 30 }

/** The start of the last call when every call goes as soon as the budget allows: call k at floor(k / 150) windows. */
export const budgetSeconds = (calls: number): number => Math.floor(Math.max(0, calls - 1) / BUDGET.requests) * BUDGET.windowSeconds

export const runReconciliationBench = async (options: { readonly quick?: boolean } = {}): Promise<ReconciliationBench> => {
  const products = options.quick ? 5_000 : 100_000
  // One silent edit per page, so that no page of the pass is the same as the baseline's (a page
  // the log already holds is not compared again): the worst case, every record compared.
  const edits = products / PAGE
  const deletes = products / 1000
  const sim = await startSimulatorProcess(["--products", "10"])
  const control = new SimulatorControl(sim.url)
  try {
    await control.setRateLimits({ enabled: false })
    const t = await control.createTenant({ products, orders: 0, bills: 0, customers: 0 })
    const dir = tempDir("ocs-reconciliation-bench-")
    const base = Layer.mergeAll(
      TenantState.layer({ filename: Path.join(dir, "tenants.sqlite"), sealer: makeSealer(Buffer.alloc(32, 9)) }),
      SqliteEventLog.layer({ filename: Path.join(dir, "events.sqlite") }),
      ReadModels.ReadModels.layer({ filename: Path.join(dir, "read-models.sqlite") })
    )
    const client = unlimitedClient(sim.url)
    const layer = SyncEngine.layer({ operations: [Operation.productList], intervalMs: 3_600_000, reconcileMs: 3_600_000, overlapMs: 0, horizonMs: 365 * 24 * 3600 * 1000, pageSize: PAGE }).pipe(
      Layer.provide(client),
      Layer.provide(Ownership.layerAll),
      Layer.provideMerge(base)
    )
    const program = Effect.gen(function*() {
      const store = yield* TenantRegistry
      const sync = yield* SyncEngine
      const rm = yield* ReadModels.ReadModels
      const log = yield* EventLog.EventLog
      yield* store.upsertApp(t.app.appId, ["vt"])
      yield* store.upsertBusiness({ appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken })
      const b = Option.getOrThrow(yield* store.business(t.app.appId, t.business.businessId))
      const project = Effect.andThen(rm.catchUp(), rm.catchUp())
      const count = Effect.map(Stream.runCount(log.read({ tenant: "all" })), Number)

      // The baseline (first full sync): not measured.
      const baseline = yield* sync.runOnce(b, Operation.productList)
      if (baseline.outcome !== "done") throw new Error(`baseline pass: ${baseline.error ?? baseline.outcome}`)
      yield* project
      // Every id of the copy, in id order (the read API pages them as text).
      const all: Array<bigint> = []
      for (let after: string | undefined; ;) {
        const page = yield* rm.products(b, { limit: 1000, after })
        all.push(...page.items.map((p) => BigInt(p.id)))
        if (page.next === undefined) break
        after = page.next
      }
      all.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))
      if (all.length !== baseline.records) throw new Error(`the copy holds ${all.length} products after the baseline, ${baseline.records} read`)
      yield* Effect.promise(async () => {
        // Spread evenly (the simulator serves a little less than it seeds: some seeds are hidden).
        for (let k = 0; k < edits; k++) await control.updateProduct(b.businessId, String(all[Math.floor((k * all.length) / edits)]!), { name: `edited ${k}` }, { silent: true })
        for (let k = 0; k < deletes; k++) await control.deleteProduct(b.businessId, String(all[Math.floor((k * all.length) / deletes) + 1]!), { silent: true })
      })
      const before = yield* count

      const t0 = performance.now()
      const report = yield* sync.runOnce(b, Operation.productList, { forceFull: true })
      const t1 = performance.now()
      yield* project
      const t2 = performance.now()
      if (report.outcome !== "done") throw new Error(`reconciliation pass: ${report.error ?? report.outcome}`)

      const changes = yield* Stream.runCollect(log.read({ tenant: "all", types: [EngineRecord.CHANGES_TYPE] }))
      const changesFound = changes.flatMap((r) => DomainEvent.decode(r)).length
      return {
        products,
        served: all.length,
        edits,
        deletes,
        calls: report.pages,
        passSeconds: (t1 - t0) / 1000,
        projectSeconds: (t2 - t1) / 1000,
        totalSeconds: (t2 - t0) / 1000,
        changesFound,
        budgetSeconds: budgetSeconds(report.pages),
        logRecordsAdded: (yield* count) - before
      } satisfies ReconciliationBench
    })
    return await Effect.runPromise(Effect.scoped(Effect.provide(program, layer)))
  } finally {
    await sim.proc.stop("SIGTERM")
  }
}


export interface DeletionFeedBench {
  readonly orders: number
  readonly deleted: number
  /** Calls of one incremental read of order/deleted, and the deletions it gave. */
  readonly feedCalls: number
  readonly feedFound: number
  /** Calls of the full pass of order/list that would otherwise find them, and what it added after the feed. */
  readonly passCalls: number
  readonly passFoundAfterFeed: number
}

/**
 * Calls to find N order deletions (docs/api-catalogue.md §15): one incremental read of the
 * order/deleted feed against the full pass of order/list (every 31-day window to the horizon)
 * that finds them without it. The pass runs after the feed and must find nothing more.
 */
export const runDeletionFeedBench = async (options: { readonly quick?: boolean } = {}): Promise<DeletionFeedBench> => {
  const orders = options.quick ? 3_000 : 20_000
  const deleted = options.quick ? 30 : 200
  const sim = await startSimulatorProcess(["--products", "10"])
  const control = new SimulatorControl(sim.url)
  try {
    await control.setRateLimits({ enabled: false })
    const t = await control.createTenant({ products: 10, orders, bills: 0, customers: 5, historyDays: 120 })
    const dir = tempDir("ocs-feed-bench-")
    const base = Layer.mergeAll(
      TenantState.layer({ filename: Path.join(dir, "tenants.sqlite"), sealer: makeSealer(Buffer.alloc(32, 9)) }),
      SqliteEventLog.layer({ filename: Path.join(dir, "events.sqlite") }),
      ReadModels.ReadModels.layer({ filename: Path.join(dir, "read-models.sqlite") })
    )
    const ops = [Operation.orderList, Operation.orderDeleted]
    const layer = SyncEngine.layer({ operations: ops, intervalMs: 3_600_000, reconcileMs: 3_600_000, overlapMs: 0, horizonMs: 130 * 24 * 3600 * 1000, pageSize: PAGE }).pipe(
      Layer.provide(unlimitedClient(sim.url)),
      Layer.provide(Ownership.layerAll),
      Layer.provideMerge(base)
    )
    const program = Effect.gen(function*() {
      const store = yield* TenantRegistry
      const sync = yield* SyncEngine
      const rm = yield* ReadModels.ReadModels
      const log = yield* EventLog.EventLog
      yield* store.upsertApp(t.app.appId, ["vt"])
      yield* store.upsertBusiness({ appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken })
      const b = Option.getOrThrow(yield* store.business(t.app.appId, t.business.businessId))
      const project = Effect.andThen(rm.catchUp(), rm.catchUp())
      const found = Effect.map(Stream.runCollect(log.read({ tenant: "all", types: [EngineRecord.CHANGES_TYPE] })), (rs) =>
        rs.flatMap((r) => DomainEvent.decode(r)).filter((e) => e._tag === "OrderDeleted").length)
      for (const op of ops) {
        const r = yield* sync.runOnce(b, op)
        if (r.outcome !== "done") throw new Error(`baseline ${Operation.key(op)}: ${r.error ?? r.outcome}`)
      }
      yield* project
      const ids: Array<string> = []
      for (let after: string | undefined; ;) {
        const page = yield* rm.orders(b, { limit: 1000, after })
        ids.push(...page.items.map((o) => o.id))
        if (page.next === undefined) break
        after = page.next
      }
      yield* Effect.promise(async () => {
        for (let k = 0; k < deleted; k++) await control.deleteOrder(b.businessId, ids[Math.floor((k * ids.length) / deleted)]!)
        // The feed's ranges are whole seconds: the last deletion's second is over before the read.
        await new Promise((r) => setTimeout(r, 1100))
      })
      const feed = yield* sync.runOnce(b, Operation.orderDeleted, { gapFill: true })
      yield* project
      const feedFound = yield* found
      const pass = yield* sync.runOnce(b, Operation.orderList, { forceFull: true })
      yield* project
      return {
        orders: ids.length,
        deleted,
        feedCalls: feed.pages,
        feedFound,
        passCalls: pass.pages,
        passFoundAfterFeed: (yield* found) - feedFound
      } satisfies DeletionFeedBench
    })
    return await Effect.runPromise(Effect.scoped(Effect.provide(program, layer)))
  } finally {
    await sim.proc.stop("SIGTERM")
  }
}

if (import.meta.main) {
  const quick = process.argv.includes("--quick")
  console.log(JSON.stringify({ reconciliation: await runReconciliationBench({ quick }), deletionFeed: await runDeletionFeedBench({ quick }) }, null, 2))
}
