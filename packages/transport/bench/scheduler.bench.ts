/**
 * Scheduler cost per decision and memory per key at 10,000 keys.
 *
 *   ./ocs node --expose-gc packages/transport/bench/scheduler.bench.ts [--quick]
 *
 * A decision is one call's whole path through the core: enqueue, grant (dispatch) and release.
 * Baseline, same run: a naive fixed-window counter in a Map (what a minimal limiter costs),
 * so the ratio tells how much our exactness and fairness cost over the least one can do.
 */
import { Effect, Layer } from "effect"
import { Ids, Operation } from "@ocs/protocol"
import * as Core from "../src/internal/schedulerCore.ts"
import { RateLimiter } from "../src/RateLimiter.ts"
import { RateLimitStore } from "../src/RateLimitStore.ts"
import { TransportEvents } from "../src/TransportEvents.ts"

export interface SchedulerBench {
  readonly keys: number
  readonly decisions: number
  readonly nsPerDecision: number
  readonly baselineNsPerDecision: number
  readonly bytesPerKey: number
  readonly effectNsPerCall: number
}

const gc = (globalThis as { gc?: () => void }).gc

const heap = () => {
  gc?.()
  gc?.()
  return process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers
}

const coreDecisions = (keys: number, rounds: number): number => {
  let now = 1_000_000
  const core = new Core.SchedulerCore(now, { maxInFlight: 1_000_000 })
  const states = Array.from({ length: keys }, (_, i) => core.keyState(`1:${i}:pos:/v3.0/product/list`, 150, 30_000))
  const tickets: Array<Core.Ticket> = []
  const grant = (t: Core.Ticket) => void tickets.push(t)
  const start = process.hrtime.bigint()
  for (let r = 0; r < rounds; r++) {
    now += 1
    for (const s of states) core.enqueue(s, { grant, priority: 1, enqueuedAt: now, cancelled: false, ticket: undefined })
    core.dispatch(now)
    for (const t of tickets) core.release(t, now, true)
    tickets.length = 0
  }
  const ns = Number(process.hrtime.bigint() - start)
  return ns / (keys * rounds)
}

const baselineDecisions = (keys: number, rounds: number): number => {
  let now = 1_000_000
  const counters = new Map<string, { windowStart: number; count: number }>()
  const names = Array.from({ length: keys }, (_, i) => `1:${i}:pos:/v3.0/product/list`)
  let granted = 0
  const start = process.hrtime.bigint()
  for (let r = 0; r < rounds; r++) {
    now += 1
    for (const name of names) {
      let c = counters.get(name)
      if (c === undefined) counters.set(name, (c = { windowStart: now, count: 0 }))
      if (now - c.windowStart >= 30_000) {
        c.windowStart = now
        c.count = 0
      }
      if (c.count < 150) {
        c.count++
        granted++
      }
    }
  }
  const ns = Number(process.hrtime.bigint() - start)
  if (granted === 0) throw new Error("baseline granted nothing")
  return ns / (keys * rounds)
}

const memoryPerKey = (keys: number): number => {
  const before = heap()
  let now = 1_000_000
  const core = new Core.SchedulerCore(now, { maxInFlight: 10_000_000 })
  const tickets: Array<Core.Ticket> = []
  const grant = (t: Core.Ticket) => void tickets.push(t)
  // Every key holds a full window of 150 completions: the worst case.
  for (let i = 0; i < keys; i++) {
    const s = core.keyState(`${1000 + (i % 7)}:${9_000_000_000_000 + i}:pos:/v3.0/product/list`, 150, 30_000)
    for (let c = 0; c < 150; c++) core.enqueue(s, { grant, priority: 1, enqueuedAt: now, cancelled: false, ticket: undefined })
  }
  core.dispatch(now)
  now += 5
  for (const t of tickets) core.release(t, now, true)
  tickets.length = 0
  const after = heap()
  if (core.keys.size !== keys) throw new Error("keys lost")
  return (after - before) / keys
}

const effectCost = async (calls: number): Promise<number> => {
  // 10,000 keys, a few calls each: no call waits for its window, so this measures the path.
  const op = Operation.productList
  const layer = RateLimiter.layer({ safetyMargin: 0 }).pipe(Layer.provide(RateLimitStore.layerMemory), Layer.provide(TransportEvents.layerLog))
  return Effect.runPromise(
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const keys = Array.from({ length: 10_000 }, (_, i) => ({ tenant: Ids.makeTenant(1, i + 1), operation: op }))
      for (let i = 0; i < 2_000; i++) yield* limiter.withPermit(keys[i % 10_000]!, "bulk", () => Effect.void)
      const start = process.hrtime.bigint()
      for (let i = 0; i < calls; i++) yield* limiter.withPermit(keys[i % 10_000]!, "bulk", () => Effect.void)
      return Number(process.hrtime.bigint() - start) / calls
    }).pipe(Effect.provide(layer))
  )
}

export const runSchedulerBench = async (options: { readonly quick?: boolean } = {}): Promise<SchedulerBench> => {
  const keys = 10_000
  const rounds = options.quick ? 20 : 100
  coreDecisions(keys, 5) // warm up
  baselineDecisions(keys, 5)
  const nsPerDecision = coreDecisions(keys, rounds)
  const baselineNsPerDecision = baselineDecisions(keys, rounds)
  const bytesPerKey = memoryPerKey(keys)
  const effectNsPerCall = await effectCost(options.quick ? 5_000 : 20_000)
  return { keys, decisions: keys * rounds, nsPerDecision, baselineNsPerDecision, bytesPerKey, effectNsPerCall }
}

if (import.meta.main) {
  if (gc === undefined) console.warn("run with --expose-gc for an exact memory figure")
  const r = await runSchedulerBench({ quick: process.argv.includes("--quick") })
  console.log(`scheduler: ${r.keys} keys, ${r.decisions} decisions`)
  console.log(`  cost per decision (core):       ${(r.nsPerDecision / 1000).toFixed(3)} us  (target 5 us)`)
  console.log(`  naive fixed-window counter:     ${(r.baselineNsPerDecision / 1000).toFixed(3)} us`)
  console.log(`  through RateLimiter.withPermit: ${(r.effectNsPerCall / 1000).toFixed(3)} us per call`)
  console.log(`  memory per key (full window):   ${r.bytesPerKey.toFixed(0)} B  (target 1024 B)`)
  console.log(JSON.stringify({ bench: "scheduler", ...r }))
}
