/**
 * Budget utilisation against the simulator: calls that reached it per window over calls the
 * limit allows, for 1 and for 1,000 tenants, with a compressed window. Every tenant pages
 * through product/list as fast as its budget allows; the simulator's call log counts what
 * arrived. Targets: 0 ERR_429, utilisation >= 0.97.
 *
 *   ./ocs node packages/transport/bench/utilization.bench.ts [--quick]
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, Stream } from "effect"
import { Operation } from "@ocs/protocol"
import { startSimulator } from "@ocs/simulator"
import { CommerceClient, tenantAccess } from "../src/CommerceClient.ts"
import { RateLimiter } from "../src/RateLimiter.ts"
import { RateLimitStore } from "../src/RateLimitStore.ts"
import { TransportEvents } from "../src/TransportEvents.ts"

export interface UtilizationResult {
  readonly tenants: number
  readonly limit: number
  readonly windowMs: number
  readonly windows: number
  readonly calls: number
  readonly allowed: number
  readonly utilization: number
  readonly err429: number
  readonly lockedArrivals: number
}

const scenario = async (tenants: number, limit: number, windowMs: number, windows: number): Promise<UtilizationResult> => {
  const sim = await startSimulator({ port: 0, products: 10, demo: false, rateLimit: { limit, windowMs, lockMs: windowMs } })
  try {
    const access: Array<ReturnType<typeof tenantAccess>> = []
    for (let i = 0; i < tenants; i++) {
      const t = await sim.control.createTenant({ products: limit * (windows + 2), orders: 0 })
      access.push(tenantAccess(t.app.appId, t.business.businessId, t.token.accessToken))
    }
    const op = Operation.productList
    const layer = CommerceClient.layer({ posBaseUrl: sim.posBaseUrl, vpageBaseUrl: sim.vpageBaseUrl }).pipe(
      Layer.provideMerge(
        RateLimiter.layer({ overrides: { [op.path]: { requests: limit, windowSeconds: windowMs / 1000 } }, maxInFlight: 512 }).pipe(
          Layer.provide(RateLimitStore.layerMemory)
        )
      ),
      Layer.provide(TransportEvents.layerLog),
      Layer.provide(NodeHttpClient.layerUndici)
    )
    const since = (await sim.control.calls({ limit: 1 })).lastSeq
    const start = Date.now()
    const duration = windows * windowMs
    await Effect.runPromise(
      Effect.gen(function*() {
        const client = yield* CommerceClient
        yield* Effect.forEach(
          access,
          (tenant) => Stream.runDrain(client.pages(tenant, op, { size: 1 })).pipe(Effect.timeoutOption(duration + windowMs / 2)),
          { concurrency: "unbounded", discard: true }
        )
      }).pipe(Effect.provide(layer))
    )
    const calls: Array<{ at: number; outcome: string; locked: boolean }> = []
    for (let s = since;;) {
      const page = await sim.control.calls({ since: s, limit: 50_000 })
      calls.push(...page.calls)
      if (page.calls.length === 0 || page.lastSeq === s) break
      s = page.calls[page.calls.length - 1]!.seq
    }
    const inWindow = calls.filter((c) => c.at >= start && c.at < start + duration && c.outcome === "ok").length
    const allowed = tenants * limit * windows
    return {
      tenants,
      limit,
      windowMs,
      windows,
      calls: inWindow,
      allowed,
      utilization: inWindow / allowed,
      err429: calls.filter((c) => c.outcome === "ERR_429").length,
      lockedArrivals: calls.filter((c) => c.locked).length
    }
  } finally {
    await sim.close()
  }
}

export const runUtilizationBench = async (options: { readonly quick?: boolean } = {}): Promise<ReadonlyArray<UtilizationResult>> => [
  await scenario(1, 150, options.quick ? 1500 : 3000, options.quick ? 3 : 5),
  await scenario(options.quick ? 200 : 1000, 5, options.quick ? 2000 : 3000, options.quick ? 2 : 4)
]

if (import.meta.main) {
  const results = await runUtilizationBench({ quick: process.argv.includes("--quick") })
  for (const r of results) {
    console.log(
      `utilisation: ${r.tenants} tenant(s), ${r.limit} per ${r.windowMs} ms x ${r.windows}: ${r.calls}/${r.allowed} = ${r.utilization.toFixed(4)}; ERR_429 ${r.err429}; arrivals during a lock ${r.lockedArrivals}`
    )
  }
  console.log(JSON.stringify({ bench: "utilization", results }))
}
