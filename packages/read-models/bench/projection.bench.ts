/**
 * Projection throughput: `rebuild` of a generated event log (read, decode, project, checkpoint)
 * against the baseline of raw better-sqlite3 inserting the same rows into the same tables with
 * the same transaction sizes (rows computed outside the timed section).
 *
 *   ./ocs node packages/read-models/bench/projection.bench.ts [--quick]
 *
 * Mix per 1000 events: 350 product webhooks (productAdd/productUpdate), 100 inventoryChange
 * (3 products in 1 to 3 depots each), 150 orderAdd (nested v3 orders of 2 lines: an order row
 * and 2 line rows), and 4 product/list sync pages of 100 products (each product counted as one
 * event). 10 businesses, 20,000 products and big ids (> 2^53).
 */
import { EventLog, type LogRecord } from "@ocs/event-log"
import * as SqliteDatabase from "@ocs/event-log/SqliteDatabase"
import { DomainEvent, Json } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

export interface ProjectionBenchResult {
  readonly events: number
  readonly records: number
  readonly rows: number
  readonly batchSize: number
  readonly generateSeconds: number
  readonly rebuildSeconds: number
  readonly rebuildEventsPerSecond: number
  readonly rebuildRowsPerSecond: number
  readonly baselineSeconds: number
  readonly baselineRowsPerSecond: number
  /** baselineSeconds / rebuildSeconds: 1 means as fast as raw inserts of the same rows. */
  readonly ratio: number
}

const APP = "1001"
const BUSINESSES = ["42", "43", "44", "45", "46", "9007199254740993001", "9007199254740993002", "9007199254740993003", "18446744073709551615", "7"]
const PRODUCTS = 20_000
const PRODUCT_BASE = 9007199254740993n
const T0 = Date.UTC(2024, 0, 1)
const PRODUCT_SYNC = DomainEvent.syncMeta({ kind: "product", idField: "id", updatedAtField: "updatedAt" })

/** mulberry32: deterministic runs. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

type Row = { readonly table: "products" | "inventory" | "orders" | "order_items"; readonly params: ReadonlyArray<unknown> }
interface Generated { readonly record: LogRecord.NewRecord; readonly rows: ReadonlyArray<Row>; readonly events: number }

/** The benchmark's deterministic event mix; the replay benchmark generates its log with it too. */
export const makeGenerator = () => {
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
    prices: { retail: Math.round(random() * 100_000) * 100, import: 1000 },
    categoryId: 1 + (k % 50),
    // Unix seconds, as the service sends them.
    updatedAt: Math.floor(at / 1000),
    vendorField: { note: "kept" }
  })
  const productRow = (businessId: string, p: ReturnType<typeof product>, i: number, source: string): Row => ({
    table: "products",
    params: [APP, businessId, p.id.toString(), p.appProductId, p.code, p.barcode, p.name, p.prices.retail, String(p.prices.retail),
      String(p.categoryId), null, Json.stringify(p), String(p.updatedAt), p.updatedAt * 1000, 0, `e${i}`, i, 0, source, clock]
  })
  const webhook = (businessId: string, event: string, data: unknown): LogRecord.NewRecord => ({
    appId: APP, businessId, source: "webhook", type: event, receivedAt: clock,
    body: Json.stringify({ event, businessId: BigInt(businessId), webhooksVerifyToken: "verify", data })
  })
  /** One block of 1000 events, shuffled. */
  const block = (): Array<Generated> => {
    const kinds: Array<"product" | "inventory" | "order" | "page"> = [
      ...Array<"product">(350).fill("product"), ...Array<"inventory">(100).fill("inventory"),
      ...Array<"order">(150).fill("order"), ...Array<"page">(4).fill("page")
    ]
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!]
    }
    return kinds.map((kind, i): Generated => {
      clock += 7
      const businessId = pick(BUSINESSES)
      switch (kind) {
        case "product": {
          const p = product(Math.floor(random() * PRODUCTS), clock)
          return { record: webhook(businessId, random() < 0.2 ? "productAdd" : "productUpdate", p), rows: [productRow(businessId, p, i, "webhook")], events: 1 }
        }
        case "inventory": {
          // v3 inventoryChange: an array of products (named `id`), each with its depots.
          const items = [0, 1, 2].map(() => ({
            id: PRODUCT_BASE + BigInt(Math.floor(random() * PRODUCTS)),
            depots: Array.from({ length: 1 + Math.floor(random() * 3) }, (_, d) => ({ id: d + 1, remain: Math.floor(random() * 500), available: Math.floor(random() * 500) }))
          }))
          return {
            record: webhook(businessId, "inventoryChange", items),
            rows: items.flatMap((it, p) => it.depots.map((d, j): Row => ({
              table: "inventory",
              params: [APP, businessId, it.id.toString(), String(d.id), d.remain, String(d.remain), d.available, String(d.available), Json.stringify(d), null, null, `e${i}`, i, p * 3 + j, "webhook", clock]
            }))),
            events: 1
          }
        }
        case "order": {
          const id = PRODUCT_BASE * 2n + BigInt(orderSeq++)
          const lines = [{ productId: PRODUCT_BASE + 1n, quantity: 2, price: 150000 }, { productId: PRODUCT_BASE + 2n, quantity: 1, price: 99000 }]
          const mobile = `09${String(orderSeq % 1e8).padStart(8, "0")}`
          const createdAt = Math.floor(clock / 1000)
          const o = {
            info: { id, type: 1, status: 54, depotId: 1 + (orderSeq % 5), createdAt, updatedAt: createdAt },
            channel: { appOrderId: `web-${orderSeq}`, saleChannel: 2 },
            shippingAddress: { id: orderSeq, name: "Trần Thị B", mobile },
            products: lines,
            carrier: { id: 5, shipFee: 20000 }
          }
          const total = 150000 * 2 + 99000
          return {
            record: webhook(businessId, "orderAdd", o),
            rows: [
              { table: "orders", params: [APP, businessId, id.toString(), o.channel.appOrderId, "1", "54", "2", String(o.info.depotId), String(orderSeq), "Trần Thị B", mobile, total, String(total), 2, String(createdAt), createdAt * 1000, Json.stringify(o), String(createdAt), createdAt * 1000, 0, `e${i}`, i, 0, "webhook", clock] },
              ...lines.map((l, j): Row => ({ table: "order_items", params: [APP, businessId, id.toString(), j, l.productId.toString(), null, null, l.quantity, l.price, null, l.price * l.quantity, Json.stringify(l)] }))
            ],
            events: 1
          }
        }
        case "page": {
          const start = Math.floor(random() * (PRODUCTS - 100))
          const items = Array.from({ length: 100 }, (_, j) => product(start + j, clock - 60_000))
          return {
            record: { appId: APP, businessId, source: "sync", type: "product/list.page", receivedAt: clock, meta: PRODUCT_SYNC as unknown as LogRecord.Meta,
              body: Json.stringify({ code: 1, data: items, paginator: { next: `cursor-${clock}` } }) },
            rows: items.map((p, j) => productRow(businessId, p, j, "sync")),
            events: 100
          }
        }
      }
    })
  }
  return { block }
}

const columnsOf = (client: import("better-sqlite3").Database, table: string) =>
  (client.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((c) => c.name)

export const runProjectionBench = (options: { readonly quick: boolean; readonly batchSize?: number; readonly events?: number; readonly keepDir?: string }): Promise<ProjectionBenchResult> => {
  const dir = options.keepDir ?? NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "read-models-bench-"))
  if (options.keepDir !== undefined) NodeFs.mkdirSync(dir, { recursive: true })
  const targetEvents = options.events ?? (options.quick ? 50_000 : 1_000_000)
  const batchSize = options.batchSize ?? 5000
  const logFile = NodePath.join(dir, "log.db")
  return Effect.runPromise(Effect.gen(function*() {
    // 1. The event log.
    const generator = makeGenerator()
    let events = 0
    let records = 0
    let rows = 0
    const batches: Array<Array<Row>> = []
    let pending: Array<Row> = []
    let pendingRecords = 0
    const genStarted = performance.now()
    yield* Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      while (events < targetEvents) {
        const block = generator.block()
        yield* log.append(block.map((g) => g.record))
        for (const g of block) {
          events += g.events
          records++
          rows += g.rows.length
          pending.push(...g.rows)
          if (++pendingRecords === batchSize) {
            batches.push(pending)
            pending = []
            pendingRecords = 0
          }
        }
      }
      if (pending.length > 0) batches.push(pending)
    }).pipe(Effect.provide(EventLog.EventLog.layerSqlite({ filename: logFile, synchronous: "NORMAL", maxRecordsPerCommit: 50_000 })))
    const generateSeconds = (performance.now() - genStarted) / 1000

    // 2. Baseline: the same rows, raw INSERT OR REPLACE, same transaction sizes, pragmas and
    //    index strategy (secondary indexes built at the end).
    const baselineSeconds = yield* Effect.scoped(Effect.gen(function*() {
      const db = yield* SqliteDatabase.make({ filename: NodePath.join(dir, "baseline.db"), migrationsFolder: ReadModels.migrationsFolder, synchronous: "NORMAL" })
      return yield* db.use("baseline", (_, client) => {
        // The pragmas rebuild uses, so that only the projection's own work differs.
        client.pragma("cache_size = -262144")
        client.pragma("journal_mode = MEMORY")
        client.pragma("synchronous = OFF")
        const indexes = ReadModels.dropSecondaryIndexes(client)
        const insert = (table: string) => {
          const cols = columnsOf(client, table)
          return client.prepare(`INSERT OR REPLACE INTO ${table} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`)
        }
        const statements = { products: insert("products"), inventory: insert("inventory"), orders: insert("orders"), order_items: insert("order_items") }
        const started = performance.now()
        for (const batch of batches) {
          client.transaction(() => {
            for (const row of batch) statements[row.table].run(...row.params)
          }).immediate()
        }
        for (const ddl of indexes) client.exec(ddl)
        client.pragma("journal_mode = WAL")
        client.pragma("synchronous = FULL")
        client.pragma("wal_checkpoint(TRUNCATE)")
        return (performance.now() - started) / 1000
      })
    }))
    batches.length = 0

    // 3. rebuild from the log (the baseline's rows are released first: it does not pay GC for them).
    const rebuilt = yield* ReadModels.rebuild({ filename: NodePath.join(dir, "rebuilt.db"), batchSize }).pipe(
      Effect.provide(EventLog.EventLog.layerSqlite({ filename: logFile }))
    )
    const rebuildSeconds = rebuilt.millis / 1000

    return {
      events, records, rows, batchSize, generateSeconds,
      rebuildSeconds,
      rebuildEventsPerSecond: events / rebuildSeconds,
      rebuildRowsPerSecond: rows / rebuildSeconds,
      baselineSeconds,
      baselineRowsPerSecond: rows / baselineSeconds,
      ratio: baselineSeconds / rebuildSeconds
    }
  })).finally(() => {
    if (options.keepDir === undefined) NodeFs.rmSync(dir, { recursive: true, force: true })
  })
}

if (import.meta.main) {
  const r = await runProjectionBench({ quick: process.argv.includes("--quick") })
  console.table([
    { scenario: "rebuild (read + decode + project)", events: r.events, rows: r.rows, seconds: +r.rebuildSeconds.toFixed(2), "events/s": Math.round(r.rebuildEventsPerSecond), "rows/s": Math.round(r.rebuildRowsPerSecond) },
    { scenario: "raw better-sqlite3 inserts (baseline)", events: r.events, rows: r.rows, seconds: +r.baselineSeconds.toFixed(2), "events/s": Math.round(r.events / r.baselineSeconds), "rows/s": Math.round(r.baselineRowsPerSecond) }
  ])
  console.log(`ratio (baseline time / rebuild time): ${r.ratio.toFixed(2)}  (log of ${r.records} records generated in ${r.generateSeconds.toFixed(1)} s)`)
  console.log(JSON.stringify({ bench: "read-models/projection", ...r }))
}
