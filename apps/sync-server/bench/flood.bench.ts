/**
 * An unauthenticated flood against the main job: 32 connections posting ~1 MiB bodies with a
 * wrong verify token, while a prober asks `/healthz` one request at a time. Reported: the
 * probe's p50/p99 during the flood beside the same probe on the idle server, how the flood
 * was answered (401 until the source is throttled, then 429 once the first 64 KiB show no
 * right token; 503 past the budget for bodies not proved by a token), and
 * the server's CPU per flood request. Nothing of the flood may be stored.
 *
 *   ./ocs node apps/sync-server/bench/flood.bench.ts [--quick]
 */
import autocannon from "autocannon"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { APP, BUSINESS, cpuMicrosOf, startWebhookServer, stopAndCountStored } from "./webhookServer.ts"

export interface FloodBenchResult {
  readonly bench: "sync-server-flood"
  readonly seconds: number
  readonly idleP50Millis: number
  readonly idleP99Millis: number
  readonly floodP50Millis: number
  readonly floodP99Millis: number
  readonly probes: number
  readonly unauthorized: number
  readonly throttled: number
  readonly other: number
  readonly serverCpuMicrosPerRequest: number
  readonly stored: number
}

const CONNECTIONS = 32


const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! * 10) / 10
}

/** Probes `/healthz` one request at a time until `until()`; the latencies in ms. */
const probe = async (url: string, until: () => boolean, atLeast = 0): Promise<Array<number>> => {
  const agent = new Http.Agent({ keepAlive: false })
  const out: Array<number> = []
  while (!until() || out.length < atLeast) {
    const started = performance.now()
    await new Promise<void>((ok) => {
      const req = Http.get(`${url}/healthz`, { agent }, (res) => {
        res.resume()
        res.on("end", () => ok())
      })
      req.on("error", () => ok())
      req.setTimeout(30_000, () => req.destroy())
    })
    out.push(performance.now() - started)
  }
  return out
}

export const runFloodBench = async (options: { readonly quick?: boolean } = {}): Promise<FloodBenchResult> => {
  const seconds = options.quick ? 3 : 8
  const server = await startWebhookServer({ adminKey: "bench-flood-admin-key-0123456", encryptionKey: "58".repeat(32) })
  let stopped = false
  try {
    const idle = await probe(server.url, () => true, 200)
    const pad = "x".repeat(1024 * 1024 - 200)
    const body = `{"event":"productAdd","businessId":${BUSINESS},"data":{"pad":"${pad}"},"webhooksVerifyToken":"not-the-token"}`
    const pid = server.proc.child.pid!
    const before = cpuMicrosOf(pid)
    let done = false
    const flood = autocannon({
      url: `${server.url}/webhooks/${APP}`,
      connections: CONNECTIONS,
      duration: seconds,
      method: "POST",
      headers: { "content-type": "application/json" },
      body
    })
    const probes = probe(server.url, () => done)
    const result = await flood
    done = true
    const during = await probes
    const cpu = cpuMicrosOf(pid) - before
    stopped = true
    const stored = await stopAndCountStored(server)
    if (stored !== 0) throw new Error(`${stored} records of an unauthenticated flood were stored`)
    const codes = result.statusCodeStats
    const count = (code: string) => codes[code]?.count ?? 0
    const answered = Object.values(codes).reduce((n, c) => n + c.count, 0)
    return {
      bench: "sync-server-flood",
      seconds,
      idleP50Millis: percentile(idle, 0.5),
      idleP99Millis: percentile(idle, 0.99),
      floodP50Millis: percentile(during, 0.5),
      floodP99Millis: percentile(during, 0.99),
      probes: during.length,
      unauthorized: count("401"),
      throttled: count("429"),
      other: answered - count("401") - count("429"),
      serverCpuMicrosPerRequest: Math.round(cpu / Math.max(1, answered)),
      stored
    }
  } finally {
    if (!stopped) await server.proc.stop("SIGKILL")
    Fs.rmSync(server.dir, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === Path.resolve(process.argv[1])) {
  const r = await runFloodBench({ quick: process.argv.includes("--quick") })
  console.log(
    `flood: /healthz p50/p99 ${r.floodP50Millis}/${r.floodP99Millis} ms during (idle ${r.idleP50Millis}/${r.idleP99Millis} ms); ` +
      `${r.unauthorized} x 401, ${r.throttled} x 429, ${r.other} other; ${r.serverCpuMicrosPerRequest} µs server CPU per request; stored ${r.stored}`
  )
  console.log(JSON.stringify(r))
}
