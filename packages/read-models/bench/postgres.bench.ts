/**
 * Projection into PostgreSQL (docs/architecture.md §4.34): the Postgres store projecting a
 * generated log (decode, plan, batched upserts, applied offsets, checkpoint; one transaction
 * per batch; the rebuild, `rebuildAndSwap`, whose planner thread decodes ahead and which builds
 * the secondary indexes after the load, and `project` batch by batch) against the baseline of raw batched inserts of the same rows into the same server
 * (one `unnest` INSERT ... ON CONFLICT DO UPDATE per table and batch, rows deduplicated by key
 * beforehand, no conflict rule, no bookkeeping), and beside the SQLite projection of the same
 * records. A real PostgreSQL 15 (tooling/postgres), default settings (fsync on).
 *
 *   ./ocs node packages/read-models/bench/postgres.bench.ts [--quick] [--events N]
 *
 * The event mix is `@ocs/testkit/EventMix` (as projection.bench.ts).
 */
import { Checkpoints, EventLog, type LogRecord, SqliteEventLog } from "@ocs/event-log"
import { startPostgres } from "@ocs/postgres-server"
import { ReadModels } from "@ocs/read-models"
import { makeGenerator } from "@ocs/testkit/EventMix"
import { Effect, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import pg from "pg"
import { emptyPlan, planRecord } from "../src/internal/plan.ts"
import * as PostgresStore from "../src/postgres/PostgresStore.ts"
import { statements } from "../src/postgres/Statements.ts"

export interface PostgresBenchResult {
  readonly events: number
  readonly records: number
  readonly rows: number
  readonly batchSize: number
  /** The rebuild (`rebuildAndSwap`), from the first record to the swapped-in copy. */
  readonly postgresSeconds: number
  readonly postgresRowsPerSecond: number
  /** The same, `project` batch by batch (decoding on the writing thread); null when not run. */
  readonly batchesSeconds: number | null
  readonly batchesRowsPerSecond: number | null
  readonly baselineSeconds: number
  readonly baselineRowsPerSecond: number
  /** baselineSeconds / postgresSeconds: 1 means as fast as raw batched inserts of the same rows. */
  readonly ratio: number
  readonly sqliteSeconds: number
  readonly sqliteRowsPerSecond: number
}

export const runPostgresBench = async (options: {
  readonly quick: boolean
  readonly events?: number
  readonly batchSize?: number
  /** Also `project` batch by batch (the live path). Default true. */
  readonly batches?: boolean
}): Promise<PostgresBenchResult> => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "read-models-pg-bench-"))
  const targetEvents = options.events ?? (options.quick ? 20_000 : 200_000)
  const batchSize = options.batchSize ?? 2000
  await using server = await startPostgres()
  const url = await server.createDatabase("bench")
  try {
    return await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      // 1. The log, and its records as the projection reads them.
      const generator = makeGenerator()
      let events = 0
      const records = yield* Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        while (events < targetEvents) {
          const block = generator.block()
          yield* log.append(block.map((g) => g.record))
          for (const g of block) events += g.events
        }
        return yield* Stream.runCollect(log.read({ tenant: "all" }))
      }).pipe(Effect.provide(SqliteEventLog.layer({ filename: NodePath.join(dir, "log.db"), synchronous: "NORMAL", maxRecordsPerCommit: 50_000 })))
      const batches: Array<ReadonlyArray<LogRecord.LogRecord>> = []
      for (let i = 0; i < records.length; i += batchSize) batches.push(records.slice(i, i + batchSize))

      // 2. The Postgres store's rebuild (`rebuildAndSwap`: a planner thread decodes the next batches
      // while this one writes, a checkpoint per batch, secondary indexes built after the load, then
      // the swap), then batch by batch (`project`, decoding on this thread, as the live projection does).
      let started = performance.now()
      yield* PostgresStore.rebuildAndSwap({ url, schema: "projected", pool: 2, records: Stream.fromIterable(records), consumer: "bench", batchSize })
      const postgresSeconds = (performance.now() - started) / 1000
      const store = yield* PostgresStore.make({ url, schema: "projected", pool: 1, detectChanges: false })
      let batchesSeconds: number | null = null
      if (options.batches !== false) {
        const oneByOne = yield* PostgresStore.make({ url, schema: "batches", pool: 2, detectChanges: false })
        started = performance.now()
        for (const batch of batches) yield* oneByOne.project(batch, { consumer: "bench", checkpoint: Checkpoints.sqlite(batch[batch.length - 1]!.offset) })
        batchesSeconds = (performance.now() - started) / 1000
      }
      const counted = yield* store.query<{ rows: number }>(
        "SELECT (SELECT count(*) FROM products) + (SELECT count(*) FROM inventory) + (SELECT count(*) FROM orders) + (SELECT count(*) FROM order_items) AS rows"
      )
      const rows = counted[0]!.rows

      // 3. Baseline: the same rows (the plans, made outside the timed section), raw batched inserts.
      yield* PostgresStore.make({ url, schema: "baseline", pool: 1 })
      const prepared = batches.map((batch) => {
        const plan = emptyPlan()
        for (const record of batch) planRecord(plan, record)
        const byStatement = new Map<number, Map<string, ReadonlyArray<unknown>>>()
        for (let k = 0; k < plan.ops.length; k++) {
          const statement = statements[plan.ops[k]!]!
          if (statement.kind !== "batch" || !statement.sql.startsWith("INSERT")) continue
          const params = plan.params[k]!.slice(0, statement.width)
          const rowsOf = byStatement.get(plan.ops[k]!) ?? new Map()
          rowsOf.set(JSON.stringify(params.slice(0, statement.key)), params)
          byStatement.set(plan.ops[k]!, rowsOf)
        }
        return [...byStatement].map(([op, rowsOf]) => {
          const statement = statements[op]!
          const insert = statement.sql.split(/\s+(SELECT|ON CONFLICT)/)[0]!
          const table = /INSERT INTO (\w+)/.exec(insert)![1]!
          const columns = /\(([^)]*)\)/.exec(insert)![1]!.split(", ")
          const set = columns.map((c) => `${c} = excluded.${c}`).join(", ")
          const arrays = statement.sql.match(/\$\d+::[a-z ]+\[\]/g)!.slice(0, columns.length).join(", ")
          const key = /ON CONFLICT \(([^)]*)\)/.exec(statement.sql)![1]!
          const values = columns.map((_, c) => [...rowsOf.values()].map((row) => row[c]))
          return { text: `INSERT INTO ${table} (${columns.join(", ")}) SELECT * FROM unnest(${arrays}) ON CONFLICT (${key}) DO UPDATE SET ${set}`, values }
        })
      })
      const client = new pg.Client({ connectionString: url, options: "-c search_path=baseline" })
      yield* Effect.promise(() => client.connect())
      started = performance.now()
      yield* Effect.promise(async () => {
        for (const queries of prepared) {
          await client.query("BEGIN")
          for (const query of queries) await client.query(query)
          await client.query("COMMIT")
        }
      })
      const baselineSeconds = (performance.now() - started) / 1000
      yield* Effect.promise(() => client.end())

      // 4. The SQLite projection of the same records, same batches.
      const rm = yield* ReadModels.make({ filename: NodePath.join(dir, "read-models.db"), detectChanges: false })
      started = performance.now()
      for (const batch of batches) yield* rm.project(batch)
      const sqliteSeconds = (performance.now() - started) / 1000

      return {
        events, records: records.length, rows, batchSize,
        postgresSeconds, postgresRowsPerSecond: rows / postgresSeconds,
        batchesSeconds, batchesRowsPerSecond: batchesSeconds === null ? null : rows / batchesSeconds,
        baselineSeconds, baselineRowsPerSecond: rows / baselineSeconds,
        ratio: baselineSeconds / postgresSeconds,
        sqliteSeconds, sqliteRowsPerSecond: rows / sqliteSeconds
      }
    })))
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const at = process.argv.indexOf("--events")
  const r = await runPostgresBench({ quick: process.argv.includes("--quick"), ...(at > 0 ? { events: Number(process.argv[at + 1]) } : {}) })
  console.table([
    { scenario: "Postgres store, rebuildAndSwap (planner thread + batched upserts + checkpoint, indexes after, swap)", rows: r.rows, seconds: +r.postgresSeconds.toFixed(2), "rows/s": Math.round(r.postgresRowsPerSecond) },
    { scenario: "Postgres store, project() batch by batch (decoding on the writing thread)", rows: r.rows, seconds: r.batchesSeconds === null ? "-" : +r.batchesSeconds.toFixed(2), "rows/s": r.batchesRowsPerSecond === null ? "-" : Math.round(r.batchesRowsPerSecond) },
    { scenario: "raw batched inserts into the same server (baseline)", rows: r.rows, seconds: +r.baselineSeconds.toFixed(2), "rows/s": Math.round(r.baselineRowsPerSecond) },
    { scenario: "SQLite projection, same batches", rows: r.rows, seconds: +r.sqliteSeconds.toFixed(2), "rows/s": Math.round(r.sqliteRowsPerSecond) }
  ])
  console.log(`ratio (baseline time / Postgres store time): ${r.ratio.toFixed(2)}  (${r.events} events, ${r.records} records)`)
  console.log(JSON.stringify({ bench: "read-models/postgres", ...r }))
}
