/**
 * Projection throughput: `rebuild` of a generated event log (read, decode, project, checkpoint)
 * against the baseline of raw better-sqlite3 inserting the same rows into the same tables with
 * the same transaction sizes (rows computed outside the timed section).
 *
 *   ./ocs node packages/read-models/bench/projection.bench.ts [--quick]
 *
 * The event mix is the one of `@ocs/testkit/EventMix` (the replay benchmark uses it too): per
 * 1000 events, 350 product webhooks (productAdd/productUpdate), 100 inventoryChange (3 products
 * in 1 to 3 depots each), 150 orderAdd (nested v3 orders of 2 lines: an order row and 2 line
 * rows), and 4 product/list sync pages of 100 products (each product counted as one event).
 * 10 businesses, 20,000 products and big ids (> 2^53).
 */
import { EventLog, SqliteEventLog } from "@ocs/event-log"
import { SqliteDatabase } from "@ocs/sqlite"
import { Json } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { type Generated, makeGenerator, MIX_APP_ID, type MixProduct } from "@ocs/testkit/EventMix"
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

type Row = { readonly table: "products" | "inventory" | "orders" | "order_items"; readonly params: ReadonlyArray<unknown> }

/**
 * The rows the projection writes for one generated record, computed outside the timed section
 * for the baseline (column order as in the read-model tables).
 */
const rowsOf = ({ record, index: i, payload }: Generated): ReadonlyArray<Row> => {
  const businessId = record.businessId
  const clock = record.receivedAt
  const productRow = (p: MixProduct, position: number, source: string): Row => ({
    table: "products",
    params: [MIX_APP_ID, businessId, p.id.toString(), p.appProductId, p.code, p.barcode, p.name, p.prices.retail, String(p.prices.retail),
      String(p.categoryId), null, Json.stringify(p), String(p.updatedAt), p.updatedAt * 1000, 0, `e${position}`, position, 0, source, clock]
  })
  switch (payload.kind) {
    case "product":
      return [productRow(payload.product, i, "webhook")]
    case "inventory":
      return payload.items.flatMap((it, p) => it.depots.map((d, j): Row => ({
        table: "inventory",
        params: [MIX_APP_ID, businessId, it.id.toString(), String(d.id), d.remain, String(d.remain), d.available, String(d.available), Json.stringify(d), null, null, `e${i}`, i, p * 3 + j, "webhook", clock, 0]
      })))
    case "order": {
      const o = payload.order
      const id = o.info.id.toString()
      const total = o.products.reduce((n, l) => n + l.price * l.quantity, 0)
      return [
        { table: "orders", params: [MIX_APP_ID, businessId, id, o.channel.appOrderId, String(o.info.type), String(o.info.status), String(o.channel.saleChannel), String(o.info.depotId), String(o.shippingAddress.id), o.shippingAddress.name, o.shippingAddress.mobile, total, String(total), o.products.length, String(o.info.createdAt), o.info.createdAt * 1000, Json.stringify(o), String(o.info.updatedAt), o.info.updatedAt * 1000, 0, `e${i}`, i, 0, "webhook", clock] },
        ...o.products.map((l, j): Row => ({ table: "order_items", params: [MIX_APP_ID, businessId, id, j, l.productId.toString(), null, null, l.quantity, l.price, null, l.price * l.quantity, Json.stringify(l)] }))
      ]
    }
    case "page":
      return payload.products.map((p, j) => productRow(p, j, "sync"))
  }
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
          const gRows = rowsOf(g)
          events += g.events
          records++
          rows += gRows.length
          pending.push(...gRows)
          if (++pendingRecords === batchSize) {
            batches.push(pending)
            pending = []
            pendingRecords = 0
          }
        }
      }
      if (pending.length > 0) batches.push(pending)
    }).pipe(Effect.provide(SqliteEventLog.layer({ filename: logFile, synchronous: "NORMAL", maxRecordsPerCommit: 50_000 })))
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
      Effect.provide(SqliteEventLog.layer({ filename: logFile }))
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
