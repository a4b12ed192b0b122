/**
 * Append throughput of SqliteEventLog (group commit, synchronous=FULL) with 1 and 64 concurrent
 * appenders, against the baseline: raw better-sqlite3 inserting the same rows in one transaction.
 *
 *   ./ocs node packages/event-log/bench/append.bench.ts [--quick]
 */
import { EventLog, SqliteEventLog } from "@ocs/event-log"
import { Ids } from "@ocs/protocol"
import { SqliteDatabase } from "@ocs/sqlite"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

export interface AppendBenchResult {
  readonly name: string
  readonly records: number
  readonly seconds: number
  readonly recordsPerSecond: number
  readonly transactions: number
}

const body = (i: number) =>
  `{"event":"orderAdd","data":{"id":${9007199254740993n + BigInt(i)},"customerName":"Nguyễn Văn A","products":[{"id":1,"quantity":2,"price":150000}]}}`

const record = (i: number) => ({
  appId: "1234567890123",
  businessId: String(i % 50),
  source: "webhook" as const,
  type: "orderAdd",
  body: body(i),
  dedupeKey: `delivery-${i}`,
  meta: { remoteAddress: "203.0.113.7" }
})

const countCommits = (filename: string) =>
  Effect.scoped(Effect.flatMap(SqliteDatabase.make({ filename }), (db) =>
    db.use("count", (_, c) => (c.prepare("SELECT count(*) AS n FROM commits").get() as { n: number }).n)))

const groupCommit = (dir: string, appenders: number, records: number) =>
  Effect.gen(function*() {
    const filename = NodePath.join(dir, `group-${appenders}.db`)
    const seconds = yield* Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const perAppender = Math.ceil(records / appenders)
      const started = performance.now()
      yield* Effect.forEach(Array.from({ length: appenders }, (_, a) => a), (a) =>
        Effect.forEach(Array.from({ length: perAppender }, (_, i) => a * perAppender + i), (i) =>
          log.append([record(i)]), { discard: true }), { concurrency: "unbounded", discard: true })
      return (performance.now() - started) / 1000
    }).pipe(Effect.provide(SqliteEventLog.layer({ filename })))
    const total = Math.ceil(records / appenders) * appenders
    const transactions = yield* countCommits(filename)
    return { name: `group commit, ${appenders} appender${appenders === 1 ? "" : "s"}`, records: total, seconds, recordsPerSecond: total / seconds, transactions }
  })

const rawBaseline = (dir: string, records: number) =>
  Effect.scoped(Effect.gen(function*() {
    const filename = NodePath.join(dir, "raw.db")
    const db = yield* SqliteDatabase.make({ filename, migrationsFolder: SqliteEventLog.migrationsFolder })
    const seconds = yield* db.use("raw", (_, client) => {
      const insert = client.prepare(
        `INSERT INTO records (id, tenant, app_id, business_id, source, type, received_at, body, dedupe_key, meta, entity_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`
      )
      const started = performance.now()
      client.transaction(() => {
        for (let i = 0; i < records; i++) {
          const r = record(i)
          insert.run(crypto.randomUUID(), Ids.tenantKey(r), r.appId, r.businessId, r.source, r.type, Date.now(), r.body, r.dedupeKey, JSON.stringify(r.meta))
        }
      }).immediate()
      return (performance.now() - started) / 1000
    })
    return { name: "raw better-sqlite3, one transaction", records, seconds, recordsPerSecond: records / seconds, transactions: 1 }
  }))

export const runAppendBench = (options: { readonly quick: boolean }): Promise<ReadonlyArray<AppendBenchResult>> => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "event-log-bench-"))
  const n = options.quick ? 2_000 : 20_000
  return Effect.runPromise(Effect.gen(function*() {
    const single = yield* groupCommit(dir, 1, options.quick ? 300 : 2_000)
    const many = yield* groupCommit(dir, 64, n)
    const raw = yield* rawBaseline(dir, n)
    return [single, many, raw]
  })).finally(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
}

if (import.meta.main) {
  const results = await runAppendBench({ quick: process.argv.includes("--quick") })
  console.table(results.map((r) => ({
    scenario: r.name,
    records: r.records,
    "records/s": Math.round(r.recordsPerSecond),
    transactions: r.transactions,
    "records/tx": Math.round(r.records / r.transactions)
  })))
  console.log(JSON.stringify({ bench: "event-log/append", results }))
}
