/**
 * Durable webhooks accepted per second: the receiver over a real SqliteEventLog file
 * (synchronous=FULL, group commit) against a bare Node HTTP server that reads the body and
 * answers 200, both driven by autocannon (keep-alive, 64 connections) in the same run.
 * Every request carries a unique body so that dedupe never short-circuits the append.
 *
 * Each server runs in its own child process (this file with `--serve`), so the load generator
 * and the server do not share one event loop. The ratio is taken with one tenant (every body
 * names the same business). Two more runs are diagnostics, not part of the ratio:
 * - the same receiver with deliveries spread over 100 businesses, as a multi-tenant server gets
 *   them (each tenant's records land in different pages of the per-tenant index);
 * - synchronous=NORMAL: what the fsync at each commit costs; the receiver never uses it.
 *
 *   ./ocs node packages/ingestion/bench/ingest.bench.ts [--quick]
 *
 * Prints a table, then one JSON line. `runIngestBench` returns the figures.
 */
import autocannon from "autocannon"
import { SqliteEventLog } from "@ocs/event-log"
import { SqliteDatabase } from "@ocs/sqlite"
import { Ingestion, WebhookApps } from "@ocs/ingestion"
import { Deferred, Effect, Layer } from "effect"
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as Http from "node:http"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

const APP = "1001"
const TOKEN = "bench-verify-token"
const CONNECTIONS = 64
/** Businesses of the multi-tenant diagnostic run. */
const TENANTS = 100

type Kind = "bare" | "receiver" | "receiver-tenants" | "receiver-normal" | "receiver-rejected"
/** Connections and body size of the rejected-bodies run (unauthenticated 1 MiB deliveries). */
const REJECTED_CONNECTIONS = 8
const REJECTED_BYTES = 1024 * 1024

export interface TargetResult {
  readonly name: Kind
  /** 2xx answers per second of the measured run (for the receiver: durable records). */
  readonly acceptedPerSecond: number
  readonly p50Millis: number
  readonly p99Millis: number
  readonly non2xx: number
  readonly errors: number
  /** CPU time per answered request during the measured run: the server (all threads), the load generator. */
  readonly serverCpuMicrosPerRequest: number
  readonly loadCpuMicrosPerRequest: number
  /** Receiver only: records in the log, commit transactions, mean records per commit. */
  readonly records?: number
  readonly commits?: number
  readonly recordsPerCommit?: number
}

export interface IngestBenchResult {
  readonly bench: "ingestion"
  readonly connections: number
  readonly seconds: number
  readonly bare: TargetResult
  readonly receiver: TargetResult
  /** The receiver again, deliveries spread over `tenants` businesses (diagnostic). */
  readonly receiverTenants: TargetResult
  readonly tenants: number
  readonly receiverNormal: TargetResult
  /** receiver / bare, accepted per second; target >= 0.6. */
  readonly ratio: number
  /** receiverTenants / bare (diagnostic). */
  readonly tenantsRatio: number
  /** 1 MiB bodies with a wrong verify token (throttling off): every one answered 401, none stored. */
  readonly rejected: TargetResult
  readonly cpus: number
}

// ---------------------------------------------------------------------------------------------
// Servers (child processes)
// ---------------------------------------------------------------------------------------------

interface Stats {
  readonly records: number
  readonly commits: number
  /** CPU time of the server process so far (every thread), microseconds. */
  readonly cpuMicros: number
}

const cpuMicros = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

const send = (message: unknown) => process.send?.(message)

const serveBare = () => {
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      Buffer.concat(chunks)
      res.writeHead(200, { "content-type": "application/json; charset=utf-8" })
      res.end(`{"ok":true}`)
    })
  })
  server.keepAliveTimeout = 65_000
  server.listen(0, "127.0.0.1", () => send({ port: (server.address() as { port: number }).port }))
  process.on("message", (m) => {
    if (m === "stats") send({ stats: { records: 0, commits: 0, cpuMicros: cpuMicros() } })
    if (m === "stop") server.close(() => process.exit(0))
  })
}

const serveReceiver = (dir: string, kind: Exclude<Kind, "bare">) => {
  const filename = NodePath.join(dir, `${kind}.db`)
  const synchronous = kind === "receiver-normal" ? "NORMAL" : "FULL"
  const stats = Effect.scoped(Effect.flatMap(SqliteDatabase.make({ filename, readonly: true }), (db) =>
    db.use("stats", (_, c) => ({
      records: (c.prepare("SELECT count(*) AS n FROM records").get() as { n: number }).n,
      commits: (c.prepare("SELECT count(*) AS n FROM commits").get() as { n: number }).n
    }))))
  const program = Effect.gen(function*() {
    const ingestion = yield* Ingestion.Ingestion
    // The listener in a plain node:http server, as a user (and the sync server) mounts it.
    const server = Http.createServer({ keepAliveTimeout: 65_000 }, ingestion.nodeListener)
    yield* Effect.acquireRelease(
      Effect.callback<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      }),
      () => Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
    )
    const stop = yield* Deferred.make<void>()
    process.on("message", (m) => {
      if (m === "stats") Effect.runPromise(stats).then((s) => send({ stats: { ...s, cpuMicros: cpuMicros() } satisfies Stats }))
      if (m === "stop") Deferred.doneUnsafe(stop, Effect.void)
    })
    send({ port: (server.address() as { port: number }).port })
    yield* Deferred.await(stop)
  }).pipe(
    Effect.scoped,
    Effect.provide(
      // The rejected-bodies run measures the token check itself: throttling would answer most
      // of them 429, and the unverified-body budget most of them 503, before the whole body.
      Ingestion.Ingestion.layer(kind === "receiver-rejected" ? { authFailures: false, unverifiedBodyBudgetBytes: 0 } : {}).pipe(
        Layer.provide(WebhookApps.WebhookApps.layerMemory([{ appId: APP, verifyTokens: [TOKEN], enabled: true }])),
        Layer.provide(SqliteEventLog.layer({ filename, synchronous }))
      )
    )
  )
  Effect.runPromise(program).then(() => process.exit(0), (e) => {
    console.error(e)
    process.exit(1)
  })
}

// ---------------------------------------------------------------------------------------------
// Load (parent)
// ---------------------------------------------------------------------------------------------

const here = fileURLToPath(import.meta.url)

interface Child {
  readonly port: number
  readonly stats: () => Promise<Stats>
  readonly stop: () => Promise<void>
}

const start = (kind: Kind, dir: string): Promise<Child> =>
  new Promise((resolve, reject) => {
    // INGEST_BENCH_PROFILE=<dir>: write a CPU profile of each receiver process (where time goes).
    const profile = process.env["INGEST_BENCH_PROFILE"]
    const execArgv = profile !== undefined && kind !== "bare"
      ? [...process.execArgv, "--cpu-prof", `--cpu-prof-dir=${profile}`]
      : process.execArgv
    const child = ChildProcess.fork(here, ["--serve", kind, dir], { execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] })
    child.once("error", reject)
    child.once("message", (m) => {
      const port = (m as { port: number }).port
      resolve({
        port,
        stats: () =>
          new Promise((ok) => {
            child.once("message", (s) => ok((s as { stats: Stats }).stats))
            child.send("stats")
          }),
        stop: () =>
          new Promise((ok) => {
            child.once("exit", () => ok())
            child.send("stop")
          })
      })
    })
  })

let sequence = 0
/** A unique, realistic orderAdd delivery per request (big ids, unicode, nested products), for one of `tenants` businesses. */
const body = (tenants: number) => {
  const n = sequence++
  return `{"event":"orderAdd","businessId":${9007199254740993n + BigInt(n % tenants)},"webhooksVerifyToken":"${TOKEN}","data":{"id":${
    10_000_000_000_000_000n + BigInt(n)
  },"customerName":"Nguyễn Văn A","customerMobile":"0912345678","products":[{"productId":100001,"quantity":2,"price":150000}]}}`
}

const load = (port: number, seconds: number, tenants: number) =>
  autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{
      method: "POST",
      path: `/webhooks/${APP}`,
      headers: { "content-type": "application/json" },
      setupRequest: (request) => ({ ...request, body: body(tenants) })
    }]
  })

/**
 * One fixed 1 MiB orderAdd whose token is wrong; the token comes last, after the data, so the
 * receiver cannot find it without walking the whole body (the worst case for the scan).
 */
const rejectedBody = (() => {
  const head = `{"event":"orderAdd","businessId":42,"data":{"id":1,"products":[`
  const item = `{"productId":100001,"quantity":2,"name":"Nguyễn Văn A \\"x\\""},`
  const tail = `{"productId":1}]},"webhooksVerifyToken":"wrong-token"}`
  const room = REJECTED_BYTES - Buffer.byteLength(head) - Buffer.byteLength(tail)
  const items = item.repeat(Math.floor(room / Buffer.byteLength(item)))
  return head + items + " ".repeat(room - Buffer.byteLength(items)) + tail
})()

const loadRejected = (port: number, seconds: number) =>
  autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: REJECTED_CONNECTIONS,
    duration: seconds,
    requests: [{ method: "POST", path: `/webhooks/${APP}`, headers: { "content-type": "application/json" }, body: rejectedBody }]
  })

const measure = async (kind: Kind, dir: string, seconds: number, warmup: number): Promise<TargetResult> => {
  const tenants = kind === "receiver-tenants" ? TENANTS : 1
  const child = await start(kind, dir)
  const run_ = (s: number) => kind === "receiver-rejected" ? loadRejected(child.port, s) : load(child.port, s, tenants)
  try {
    const warm = await run_(warmup)
    const before = await child.stats()
    const loadBefore = cpuMicros()
    const run = await run_(seconds)
    const loadCpu = cpuMicros() - loadBefore
    const stats = await child.stats()
    const perRequest = (micros: number) => Math.round((micros / Math.max(1, run["2xx"] + run.non2xx)) * 10) / 10
    const result: TargetResult = {
      name: kind,
      acceptedPerSecond: Math.round(run["2xx"] / run.duration),
      p50Millis: run.latency.p50,
      p99Millis: run.latency.p99,
      non2xx: run.non2xx,
      errors: run.errors,
      serverCpuMicrosPerRequest: perRequest(stats.cpuMicros - before.cpuMicros),
      loadCpuMicrosPerRequest: perRequest(loadCpu)
    }
    if (kind === "bare") return result
    if (kind === "receiver-rejected") {
      if (stats.records !== 0 || run["2xx"] !== 0) throw new Error(`${kind}: a delivery with a wrong token was accepted`)
      return { ...result, records: 0 }
    }
    const answered = warm["2xx"] + run["2xx"]
    // Requests in flight when autocannon stops are stored but their answers are not counted.
    if (stats.records < answered || stats.records - answered > 2 * CONNECTIONS) {
      throw new Error(`${kind}: ${answered} answered 200 but ${stats.records} records in the log`)
    }
    return { ...result, records: stats.records, commits: stats.commits, recordsPerCommit: Math.round((stats.records / stats.commits) * 10) / 10 }
  } finally {
    await child.stop()
  }
}

const ratioOf = (ours: TargetResult, bare: TargetResult) => Math.round((ours.acceptedPerSecond / bare.acceptedPerSecond) * 100) / 100

export const runIngestBench = async (options: { readonly quick?: boolean } = {}): Promise<IngestBenchResult> => {
  const seconds = options.quick ? 2 : 10
  const warmup = options.quick ? 1 : 2
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "ingest-bench-"))
  try {
    const bare = await measure("bare", dir, seconds, warmup)
    const receiver = await measure("receiver", dir, seconds, warmup)
    const receiverTenants = await measure("receiver-tenants", dir, seconds, warmup)
    const receiverNormal = await measure("receiver-normal", dir, seconds, warmup)
    const rejected = await measure("receiver-rejected", dir, seconds, warmup)
    return {
      bench: "ingestion",
      connections: CONNECTIONS,
      seconds,
      bare,
      receiver,
      receiverTenants,
      tenants: TENANTS,
      receiverNormal,
      ratio: ratioOf(receiver, bare),
      tenantsRatio: ratioOf(receiverTenants, bare),
      rejected,
      cpus: NodeOs.availableParallelism()
    }
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

const serveIndex = process.argv.indexOf("--serve")
if (serveIndex !== -1) {
  const kind = process.argv[serveIndex + 1] as Kind
  const dir = process.argv[serveIndex + 2]!
  if (kind === "bare") serveBare()
  else serveReceiver(dir, kind)
} else if (process.argv[1] !== undefined && here === NodePath.resolve(process.argv[1])) {
  const result = await runIngestBench({ quick: process.argv.includes("--quick") })
  const names: Record<Kind, string> = {
    bare: "bare node:http",
    receiver: "receiver (FULL)",
    "receiver-tenants": `receiver (FULL, ${result.tenants} tenants, diagnostic)`,
    "receiver-normal": "receiver (NORMAL, diagnostic)",
    "receiver-rejected": "rejected 1 MiB bodies (wrong token, no throttling)"
  }
  const rows = [result.bare, result.receiver, result.receiverTenants, result.receiverNormal, result.rejected].map((r) => ({
    server: names[r.name],
    "accepted/s": r.acceptedPerSecond,
    "p50 ms": r.p50Millis,
    "p99 ms": r.p99Millis,
    "non-2xx": r.non2xx,
    errors: r.errors,
    "server CPU µs/req": r.serverCpuMicrosPerRequest,
    "load CPU µs/req": r.loadCpuMicrosPerRequest,
    "records/commit": r.recordsPerCommit ?? "-"
  }))
  console.table(rows)
  console.log(`ratio receiver/bare: ${result.ratio} (target >= 0.6)`)
  console.log(`with ${result.tenants} tenants: ${result.tenantsRatio} (diagnostic)`)
  console.log(`rejected 1 MiB bodies, CPU µs per request: ${result.rejected.serverCpuMicrosPerRequest} (${result.rejected.non2xx} answered, ${result.rejected.acceptedPerSecond} accepted/s)`)
  console.log(JSON.stringify(result))
}
