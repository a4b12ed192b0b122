/**
 * Server RSS with many idle tenants (target <= 250 MB at 1,000), beside an empty Node
 * process measured in the same run. The simulator and the server run as their own
 * processes; every tenant's first full sync completes before the measurement.
 *
 *   ./ocs node apps/sync-server/bench/memory.bench.ts [--quick]
 */

import * as Fs from "node:fs"
import { SimulatorControl } from "@ocs/simulator"
import { eventually, spawnNode, startServerProcess, startSimulatorProcess } from "../test/processes.ts"

export interface MemoryBench {
  readonly tenants: number
  readonly rssMb: number
  readonly baselineRssMb: number
  readonly syncSeconds: number
  readonly heapUsedMb: number
  readonly heapTotalMb: number
  readonly externalMb: number
}

const rssOf = (pid: number) => {
  const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024
}

export const runMemoryBench = async (options: { readonly quick?: boolean } = {}): Promise<MemoryBench> => {
  const tenants = options.quick ? 60 : 1000
  const sim = await startSimulatorProcess(["--products", "10"])
  const control = new SimulatorControl(sim.url)
  const adminKey = "bench-admin-key-0123456789"
  try {
    const apps = []
    for (let i = 0; i < tenants; i++) {
      const t = await control.createTenant({ products: 20, orders: 2 })
      apps.push({ appId: t.app.appId, verifyTokens: [t.app.verifyToken], businesses: [{ businessId: t.business.businessId, accessToken: t.token.accessToken }] })
    }
    const started = Date.now()
    const server = await startServerProcess({
      server: { host: "127.0.0.1", port: 0, adminKey },
      dataDir: "data",
      api: { posBaseUrl: `${sim.url}/pos`, vpageBaseUrl: `${sim.url}/vpage` },
      sync: { resources: ["product", "order", "bill"], intervalSeconds: 3600, reconcileSeconds: 86_400, overlapSeconds: 60 },
      webhooks: { silenceAlertSeconds: 86_400 },
      tenants: apps
    }, { OCS_ENCRYPTION_KEY: "22".repeat(32) })
    try {
      await eventually("every tenant's first full sync", async () => {
        const r = await fetch(`${server.url}/admin/sync`, { headers: { "x-admin-key": adminKey } })
        const body = (await r.json()) as { sync: Array<{ fullCompletedAt: number | null }> }
        return body.sync.filter((s) => s.fullCompletedAt !== null).length === tenants * 3 ? true : undefined
      }, 300_000, 1000)
      const syncSeconds = (Date.now() - started) / 1000
      await new Promise((r) => setTimeout(r, 3000)) // idle
      const rssMb = rssOf(server.proc.child.pid!)
      if (process.env["OCS_BENCH_DEBUG"] !== undefined) {
        const status = Fs.readFileSync(`/proc/${server.proc.child.pid}/status`, "utf8")
        console.error(status.split("\n").filter((l) => /^(Rss|Threads|VmData)/.test(l)).join(" | "))
      }
      const metrics = await (await fetch(`${server.url}/metrics`)).text()
      const gauge = (name: string) => Number(new RegExp(`^${name} (\\d+)`, "m").exec(metrics)?.[1] ?? NaN) / 2 ** 20
      const heap = { heapUsedMb: gauge("ocs_process_heap_used_bytes"), heapTotalMb: gauge("ocs_process_heap_total_bytes"), externalMb: gauge("ocs_process_external_bytes") }
      const idle = await spawnNode(["-e", "console.log('ready'); setInterval(() => {}, 1000)"], /ready/)
      const baselineRssMb = rssOf(idle.proc.child.pid!)
      await idle.proc.stop("SIGKILL")
      return { tenants, rssMb, baselineRssMb, syncSeconds, ...heap }
    } finally {
      await server.proc.stop("SIGTERM")
    }
  } finally {
    await sim.proc.stop("SIGTERM")
  }
}

if (import.meta.main) {
  const r = await runMemoryBench({ quick: process.argv.includes("--quick") })
  console.log(`server RSS with ${r.tenants} idle tenants: ${r.rssMb.toFixed(1)} MB (empty node: ${r.baselineRssMb.toFixed(1)} MB; first sync of all took ${r.syncSeconds.toFixed(1)} s)`)
  console.log(JSON.stringify({ bench: "server-memory", ...r }))
}

