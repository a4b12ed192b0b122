/**
 * The console's reads with many tenants: `/admin/overview` (the snapshot every console follows)
 * and the series behind the charts (`/admin/series` for the hour and the day, a tenant's
 * series, budget use per key), timed warm against a server holding 1,000 tenants whose first
 * full sync has completed, beside `/healthz` (the server's own path, no key, no work) in the
 * same run. The server and the simulator run as their own processes. Figures are printed,
 * never asserted.
 *
 * The paths are timed in interleaved rounds, each at least 1.1 s long: the overview is made at
 * most once a second and shared, so each of its requests builds a fresh snapshot (a request
 * within the second would time the cache).
 *
 *   ./ocs node apps/sync-server/bench/console.bench.ts [--quick]
 */
import { SimulatorControl } from "@ocs/simulator"
import { eventually, startServerProcess, startSimulatorProcess } from "../test/processes.ts"

export interface Timing {
  readonly path: string
  readonly requests: number
  readonly p50Ms: number
  readonly p95Ms: number
  readonly bytes: number
}

export interface ConsoleBench {
  readonly tenants: number
  /** Resource states when the timing began, and how many had completed their first full sync. */
  readonly resources: number
  readonly complete: number
  readonly overview: Timing
  readonly seriesHour: Timing
  readonly seriesDay: Timing
  readonly tenantSeries: Timing
  readonly budgetSeries: Timing
  readonly healthz: Timing
  /** Heap in use after the run (MiB), with the series of every tenant and key kept. */
  readonly heapUsedMb: number
}

const quantile = (xs: ReadonlyArray<number>, q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!
}

export const runConsoleBench = async (options: { readonly quick?: boolean } = {}): Promise<ConsoleBench> => {
  const tenants = options.quick ? 40 : 1000
  const sim = await startSimulatorProcess(["--products", "10"])
  const control = new SimulatorControl(sim.url)
  const adminKey = "bench-admin-key-0123456789"
  try {
    const apps = []
    for (let i = 0; i < tenants; i++) {
      const t = await control.createTenant({ products: 20, orders: 2 })
      apps.push({ appId: t.app.appId, verifyTokens: [t.app.verifyToken], businesses: [{ businessId: t.business.businessId, accessToken: t.token.accessToken }] })
    }
    const server = await startServerProcess({
      server: { host: "127.0.0.1", port: 0, adminKey },
      dataDir: "data",
      api: { posBaseUrl: `${sim.url}/pos`, vpageBaseUrl: `${sim.url}/vpage` },
      // One resource, so that the first full syncs end and the reads are timed on a quiet
      // server (the charts then hold the pages those syncs pulled).
      sync: { resources: ["product"], intervalSeconds: 3600, reconcileSeconds: 86_400, overlapSeconds: 60 },
      webhooks: { silenceAlertSeconds: 86_400 },
      tenants: apps
    }, { OCS_ENCRYPTION_KEY: "22".repeat(32) })
    try {
      const get = async (path: string) => {
        const started = performance.now()
        const r = await fetch(`${server.url}${path}`, { headers: { "x-admin-key": adminKey } })
        const text = await r.text()
        if (r.status !== 200) throw new Error(`${path}: ${r.status} ${text.slice(0, 200)}`)
        return { ms: performance.now() - started, bytes: text.length }
      }
      const synced = await eventually("every tenant's first full sync", async () => {
        const r = await fetch(`${server.url}/admin/sync`, { headers: { "x-admin-key": adminKey } })
        const body = (await r.json()) as { sync: Array<{ fullCompletedAt: number | null }> }
        const complete = body.sync.filter((s) => s.fullCompletedAt !== null).length
        return complete === tenants ? { resources: body.sync.length, complete } : undefined
      }, 900_000, 2000)
      // Two samples at least (5 s apart), so that every series holds data.
      await new Promise((r) => setTimeout(r, 11_000))
      // Interleaved rounds, so that every path is timed under the same load (a shared machine's).
      const n = options.quick ? 10 : 30
      const a = apps[0]!
      const paths = [
        "/healthz",
        "/admin/overview",
        "/admin/series?range=hour",
        "/admin/series?range=day",
        `/admin/tenants/${a.appId}/${a.businesses[0]!.businessId}/series?range=day`,
        "/admin/budgets/series"
      ]
      for (const path of paths) await get(path) // warm
      const ms = new Map(paths.map((p) => [p, [] as Array<number>]))
      const bytes = new Map<string, number>()
      for (let i = 0; i < n; i++) {
        const round = Date.now()
        for (const path of paths) {
          const r = await get(path)
          ms.get(path)!.push(r.ms)
          bytes.set(path, r.bytes)
        }
        const rest = 1100 - (Date.now() - round)
        if (rest > 0) await new Promise((r) => setTimeout(r, rest))
      }
      const timing = (path: string): Timing => ({ path, requests: n, p50Ms: quantile(ms.get(path)!, 0.5), p95Ms: quantile(ms.get(path)!, 0.95), bytes: bytes.get(path)! })
      const [healthz, overview, seriesHour, seriesDay, tenantSeries, budgetSeries] = paths.map(timing) as [Timing, Timing, Timing, Timing, Timing, Timing]
      const metrics = await (await fetch(`${server.url}/metrics`)).text()
      const heapUsedMb = Number(/^ocs_process_heap_used_bytes (\d+)/m.exec(metrics)?.[1] ?? NaN) / 2 ** 20
      return { tenants, ...synced, overview, seriesHour, seriesDay, tenantSeries, budgetSeries, healthz, heapUsedMb }
    } finally {
      await server.proc.stop("SIGTERM")
    }
  } finally {
    await sim.proc.stop("SIGTERM")
  }
}

if (import.meta.main) {
  const r = await runConsoleBench({ quick: process.argv.includes("--quick") })
  for (const t of [r.overview, r.seriesHour, r.seriesDay, r.tenantSeries, r.budgetSeries, r.healthz]) {
    console.log(`${t.path} with ${r.tenants} tenants: p50 ${t.p50Ms.toFixed(1)} ms, p95 ${t.p95Ms.toFixed(1)} ms, ${t.bytes} bytes`)
  }
  console.log(`heap in use: ${r.heapUsedMb.toFixed(1)} MiB; ${r.complete} of ${r.resources} resources had completed their first full sync`)
  console.log(JSON.stringify({ bench: "console", ...r }))
}
