/**
 * End-to-end replay throughput: generates an event log, then times `ocs-replay replay` run as a
 * process (startup, reading the log, decoding, projecting, indexes, summary: real CLI cost).
 *
 *   ./ocs node apps/replay/bench/replay.bench.ts [--quick]
 *
 * The mix is read-models' projection bench's: per 1000 events, 350 product webhooks
 * (productAdd/productUpdate), 100 inventoryChange (3 stock levels each), 150 orderAdd and 4
 * product/list sync pages of 100 products (each product one event); 10 businesses, 20,000
 * products, ids beyond 2^53. Target: 1,000,000 events in under 30 s.
 */
import { EventLog, type LogRecord } from "@ocs/event-log"
import { DomainEvent, Json } from "@ocs/protocol"
import { Effect } from "effect"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"

export interface ReplayBenchResult {
  readonly events: number
  readonly records: number
  readonly generateSeconds: number
  /** Wall time of the CLI process. */
  readonly seconds: number
  readonly eventsPerSecond: number
  readonly recordsPerSecond: number
  /** The time the CLI reported for the replay itself (without process startup). */
  readonly replaySeconds: number
  readonly targetSeconds: number | null
  readonly withinTarget: boolean | null
}

const ROOT = NodeUrl.fileURLToPath(new URL("../../../", import.meta.url))
const APP = "1001"
const BUSINESSES = ["42", "43", "44", "45", "46", "9007199254740993001", "9007199254740993002", "9007199254740993003", "18446744073709551615", "7"]
const PRODUCTS = 20_000
const PRODUCT_BASE = 9007199254740993n
const T0 = Date.UTC(2024, 0, 1)
const PRODUCT_SYNC = DomainEvent.syncMeta({ kind: "product", idField: "id", updatedAtField: "updatedAt" }) as unknown as LogRecord.Meta

/** mulberry32: deterministic runs. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const makeGenerator = () => {
  const random = prng(7)
  const pick = <A>(xs: ReadonlyArray<A>) => xs[Math.floor(random() * xs.length)]!
  let clock = T0
  let orderSeq = 0
  const product = (k: number, at: number) => ({
    id: PRODUCT_BASE + BigInt(k),
    appProductId: `ap-${k}`,
    code: `SKU-${k}`,
    barcode: `893${String(k).padStart(10, "0")}`,
    name: `Sản phẩm ${k} (${Math.floor(random() * 1000)})`,
    price: Math.round(random() * 1_000_000) / 100,
    updatedAt: new Date(at).toISOString(),
    vendorField: { note: "kept" }
  })
  const webhook = (businessId: string, event: string, data: unknown): LogRecord.NewRecord => ({
    appId: APP, businessId, source: "webhook", type: event, receivedAt: clock,
    body: Json.stringify({ event, businessId: BigInt(businessId), webhooksVerifyToken: "verify", data })
  })
  /** One block of 1000 events (604 records), shuffled. */
  const block = (): Array<{ readonly record: LogRecord.NewRecord; readonly events: number }> => {
    const kinds: Array<"product" | "inventory" | "order" | "page"> = [
      ...Array<"product">(350).fill("product"), ...Array<"inventory">(100).fill("inventory"),
      ...Array<"order">(150).fill("order"), ...Array<"page">(4).fill("page")
    ]
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!]
    }
    return kinds.map((kind) => {
      clock += 7
      const businessId = pick(BUSINESSES)
      switch (kind) {
        case "product":
          return { record: webhook(businessId, random() < 0.2 ? "productAdd" : "productUpdate", product(Math.floor(random() * PRODUCTS), clock)), events: 1 }
        case "inventory": {
          const items = [0, 1, 2].map((d) => ({ productId: PRODUCT_BASE + BigInt(Math.floor(random() * PRODUCTS)), depotId: d + 1, quantity: Math.floor(random() * 500), available: Math.floor(random() * 500) }))
          return { record: webhook(businessId, "inventoryChange", { products: items }), events: 1 }
        }
        case "order": {
          const id = PRODUCT_BASE * 2n + BigInt(orderSeq++)
          return {
            record: webhook(businessId, "orderAdd", {
              id, appOrderId: `web-${orderSeq}`, customerName: "Trần Thị B", customerMobile: `09${String(orderSeq % 1e8).padStart(8, "0")}`,
              status: "new", updatedAt: new Date(clock).toISOString(),
              products: [{ id: PRODUCT_BASE + 1n, quantity: 2, price: 150000 }, { id: PRODUCT_BASE + 2n, quantity: 1, price: 99000 }]
            }),
            events: 1
          }
        }
        case "page": {
          const start = Math.floor(random() * (PRODUCTS - 100))
          const items = Array.from({ length: 100 }, (_, j) => product(start + j, clock - 60_000))
          return {
            record: { appId: APP, businessId, source: "sync", type: "product/list.page", receivedAt: clock, meta: PRODUCT_SYNC,
              body: Json.stringify({ code: 1, data: items, paginator: { next: `cursor-${clock}` } }) },
            events: 100
          }
        }
      }
    })
  }
  return { block }
}

/** Writes a log of about `target` events; returns the counts. */
export const generateLog = (filename: string, target: number) =>
  Effect.runPromise(Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    const generator = makeGenerator()
    let events = 0
    let records = 0
    while (events < target) {
      const block = generator.block()
      yield* log.append(block.map((g) => g.record))
      for (const g of block) events += g.events
      records += block.length
    }
    return { events, records }
  }).pipe(Effect.scoped, Effect.provide(EventLog.EventLog.layerSqlite({ filename, synchronous: "NORMAL", maxRecordsPerCommit: 50_000 }))))

const runCli = (args: ReadonlyArray<string>) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve, reject) => {
    const child = NodeChildProcess.spawn(process.execPath, ["apps/replay/src/bin.ts", ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s))
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

export const runReplayBench = async (options: { readonly quick: boolean; readonly events?: number }): Promise<ReplayBenchResult> => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "replay-bench-"))
  try {
    const target = options.events ?? (options.quick ? 50_000 : 1_000_000)
    const log = NodePath.join(dir, "events.sqlite")
    const genStarted = performance.now()
    const generated = await generateLog(log, target)
    const generateSeconds = (performance.now() - genStarted) / 1000
    const started = performance.now()
    const run = await runCli(["replay", "--log", log, "--out", NodePath.join(dir, "rm.sqlite"), "--progress", "none", "--format", "json"])
    const seconds = (performance.now() - started) / 1000
    if (run.code !== 0) throw new Error(`ocs-replay replay exited ${run.code}: ${run.stderr}`)
    const summary = JSON.parse(run.stdout) as { readonly events: number; readonly records: number; readonly seconds: number }
    if (summary.events !== generated.events) throw new Error(`replayed ${summary.events} events, generated ${generated.events}`)
    const targetSeconds = target === 1_000_000 ? 30 : null
    return {
      events: summary.events,
      records: summary.records,
      generateSeconds,
      seconds,
      eventsPerSecond: summary.events / seconds,
      recordsPerSecond: summary.records / seconds,
      replaySeconds: summary.seconds,
      targetSeconds,
      withinTarget: targetSeconds === null ? null : seconds < targetSeconds
    }
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const r = await runReplayBench({ quick: process.argv.includes("--quick") })
  console.table([{ scenario: "ocs-replay replay (process)", events: r.events, records: r.records, seconds: +r.seconds.toFixed(2), "events/s": Math.round(r.eventsPerSecond), "records/s": Math.round(r.recordsPerSecond) }])
  console.log(JSON.stringify({ bench: "replay/cli", ...r }))
}
