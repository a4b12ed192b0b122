/**
 * The main job's webhook path: the sync server process, started as `./ocs start` starts it
 * (same Node flags), receiving productAdd webhooks from autocannon (keep-alive, 64
 * connections, unique bodies). Stored webhooks per second, latency, and the server's CPU time
 * per webhook (all its threads: HTTP, receiver, log writer, projection, tenant activity).
 * The receiver alone, in a bare process, is the ingestion bench; this is what a deployment
 * gets with everything else the server does per webhook.
 *
 * After the run the server is stopped and its event log file is read: every answered 200
 * must be a stored record.
 *
 *   ./ocs node apps/sync-server/bench/webhooks.bench.ts [--quick] [--tracing=0.1] [--rate=2000] [--disk-probe | --no-disk-probe]
 *
 * `--disk-probe` / `--no-disk-probe` set `sqlite.diskProbe` (absent: the server's default).
 */
import autocannon from "autocannon"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { APP, BUSINESS, cpuMicrosOf, startWebhookServer, stopAndCountStored, TOKEN, writeCallsOf } from "./webhookServer.ts"

export interface WebhooksBenchResult {
  readonly bench: "sync-server-webhooks"
  readonly connections: number
  readonly seconds: number
  readonly storedPerSecond: number
  readonly p50Millis: number
  readonly p99Millis: number
  readonly non2xx: number
  readonly errors: number
  /** CPU time of the server process (every thread) per answered webhook, during the measured run. */
  readonly serverCpuMicrosPerWebhook: number
  /**
   * Write system calls of the server process (every thread) per answered webhook: the log's
   * appends, the projection's commits and, with `sqlite.diskProbe`, one probe per SQLite access
   * of the main thread (the difference between the two modes counts the probes).
   */
  readonly serverWriteCallsPerWebhook: number
  readonly recordsStored: number
  /** With tracing on: the sample ratio and the spans the collector received. */
  readonly tracing?: { readonly sampleRatio: number; readonly spansExported: number }
}

/**
 * An OTLP/HTTP sink on 127.0.0.1 for the traced runs: counts the spans it is sent, so the
 * cost measured includes building and sending them. It shares a process with the load
 * generator, so it counts without parsing (one `"spanId":` per span; links carry their own
 * and are counted too).
 */
const startCollector = async () => {
  let spans = 0
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = Buffer.concat(chunks)
      for (let at = body.indexOf(SPAN_ID); at !== -1; at = body.indexOf(SPAN_ID, at + 1)) spans++
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  return { url: `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`, spans: () => spans, close: () => server.close() }
}

const CONNECTIONS = 64
const SPAN_ID = Buffer.from(`"spanId":`)


/**
 * `tracing`: the sample ratio of a run with traces exported over OTLP; absent: tracing off.
 * `rate`: requests per second in all (autocannon's overall rate); absent: as fast as answered.
 * At a fixed rate below saturation the CPU per webhook is the steadier figure on a shared
 * machine.
 */
export const runWebhooksBench = async (options: { readonly quick?: boolean; readonly tracing?: number; readonly rate?: number; readonly diskProbe?: boolean } = {}): Promise<WebhooksBenchResult> => {
  const seconds = options.quick ? 3 : 10
  const warmup = options.quick ? 1 : 2
  const collector = options.tracing === undefined ? undefined : await startCollector()
  const server = await startWebhookServer({
    adminKey: "bench-webhooks-admin-key-0123",
    encryptionKey: "57".repeat(32),
    tracing: collector === undefined ? undefined : { otlpEndpoint: collector.url, sampleRatio: options.tracing, exportIntervalMillis: 1000 },
    sqlite: options.diskProbe === undefined ? undefined : { diskProbe: options.diskProbe }
  })
  let stopped = false
  try {
    let sequence = 0
    const load = (duration: number) =>
      autocannon({
        url: `${server.url}/webhooks/${APP}`,
        connections: CONNECTIONS,
        ...(options.rate === undefined ? {} : { overallRate: options.rate }),
        duration,
        requests: [{
          method: "POST",
          headers: { "content-type": "application/json" },
          setupRequest: (request) => {
            const i = sequence++
            return { ...request, body: `{"event":"productAdd","businessId":${BUSINESS},"webhooksVerifyToken":"${TOKEN}","data":{"id":${1_000_000 + i},"name":"bench ${i}","price":${i}}}` }
          }
        }]
      })
    const pid = server.proc.child.pid!
    const warm = await load(warmup)
    const before = cpuMicrosOf(pid)
    const writesBefore = writeCallsOf(pid)
    const run = await load(seconds)
    const cpu = cpuMicrosOf(pid) - before
    const writes = writeCallsOf(pid) - writesBefore
    stopped = true
    const stored = await stopAndCountStored(server)
    const answered = warm["2xx"] + run["2xx"]
    // Requests in flight when autocannon stops are stored but their answers are not counted.
    if (stored < answered || stored - answered > 2 * CONNECTIONS) {
      throw new Error(`${answered} webhooks answered 200 but ${stored} stored`)
    }
    return {
      bench: "sync-server-webhooks",
      connections: CONNECTIONS,
      seconds,
      storedPerSecond: Math.round(run["2xx"] / run.duration),
      p50Millis: run.latency.p50,
      p99Millis: run.latency.p99,
      non2xx: run.non2xx,
      errors: run.errors,
      serverCpuMicrosPerWebhook: Math.round((cpu / Math.max(1, run["2xx"] + run.non2xx)) * 10) / 10,
      serverWriteCallsPerWebhook: Math.round((writes / Math.max(1, run["2xx"] + run.non2xx)) * 100) / 100,
      recordsStored: stored,
      ...(collector === undefined ? {} : { tracing: { sampleRatio: options.tracing!, spansExported: collector.spans() } })
    }
  } finally {
    collector?.close()
    if (!stopped) await server.proc.stop("SIGKILL")
    Fs.rmSync(server.dir, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === Path.resolve(process.argv[1])) {
  const sample = process.argv.find((a) => a.startsWith("--tracing="))
  const rate = process.argv.find((a) => a.startsWith("--rate="))
  const r = await runWebhooksBench({
    quick: process.argv.includes("--quick"),
    ...(sample === undefined ? {} : { tracing: Number(sample.slice(10)) }),
    ...(rate === undefined ? {} : { rate: Number(rate.slice(7)) }),
    ...(process.argv.includes("--disk-probe") ? { diskProbe: true } : process.argv.includes("--no-disk-probe") ? { diskProbe: false } : {})
  })
  console.log(
    `sync server: ${r.storedPerSecond} stored webhooks/s (p50 ${r.p50Millis} ms, p99 ${r.p99Millis} ms), ` +
      `${r.serverCpuMicrosPerWebhook} µs server CPU per webhook, ${r.serverWriteCallsPerWebhook} write calls per webhook, ${r.non2xx} non-2xx`
  )
  console.log(JSON.stringify(r))
}
