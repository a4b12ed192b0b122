/**
 * Rebuild without downtime (docs/architecture.md §4.34): a rebuild into a new schema swapped in
 * atomically, while readers query the copy without pause: every read answers from a complete
 * copy, the old one or the new one, never a half-built one, and never fails.
 */
import { assert, describe, it } from "@effect/vitest"
import { databaseOfFile, postgresUnavailable } from "@ocs/postgres-server/testing"
import { type LogRecord, SqliteEventLog } from "@ocs/event-log"
import { PostgresStore } from "@ocs/read-models/postgres"
import { Effect, Stream } from "effect"
import pg from "pg"
import { append, files, mixedRecords, readLog } from "../helpers.ts"

const database = databaseOfFile()

/** One statement, one snapshot: what a reader sees of the copy. */
const SNAPSHOT = `SELECT (SELECT count(*) FROM products)::int AS products, (SELECT count(*) FROM orders)::int AS orders,
  (SELECT coalesce(max(last_offset), 0) FROM products)::int AS last, (SELECT checkpoint FROM consumer_checkpoints) AS checkpoint`

describe.skipIf(postgresUnavailable())("rebuild into a new schema, then swap", () => {
  it.live("every read during a rebuild and swap answers from a complete copy", () =>
    Effect.gen(function*() {
      const records: ReadonlyArray<LogRecord.LogRecord> = yield* Effect.gen(function*() {
        yield* append(mixedRecords(1000, 9))
        return yield* readLog
      }).pipe(Effect.provide(SqliteEventLog.layer({ filename: files().log })))
      const url = database()
      const first = records.slice(0, 700)
      // The live copy: the first 700 records.
      yield* PostgresStore.rebuildAndSwap({ url, schema: "copy", records: Stream.fromIterable(first), batchSize: 250 })
      const readers = new pg.Pool({ connectionString: url, max: 3, options: "-c search_path=copy" })
      const snapshot = async () => JSON.stringify((await readers.query(SNAPSHOT)).rows[0])
      const before = yield* Effect.promise(snapshot)

      // Readers query without pause while the whole log is rebuilt into copy_next and swapped in.
      // Each reader keeps its own sequence: reads of different connections overlap, so one that
      // began before the swap may end after another's first read of the new copy.
      const sequences: Array<Array<string>> = [[], [], []]
      const seen: Array<string> = []
      const failures: Array<string> = []
      const load = { reading: true }
      const reader = async (mine: Array<string>) => {
        while (load.reading) {
          try {
            const s = await snapshot()
            mine.push(s)
            seen.push(s)
          } catch (error) {
            failures.push(String(error))
          }
        }
      }
      const loops = sequences.map(reader)
      const result = yield* PostgresStore.rebuildAndSwap({ url, schema: "copy", records: Stream.fromIterable(records), batchSize: 250 })
      // keep reading a little after the swap
      const afterSwap = seen.length
      while (seen.length < afterSwap + 30) yield* Effect.sleep("10 millis")
      load.reading = false
      yield* Effect.promise(() => Promise.all(loops))
      const after = yield* Effect.promise(snapshot)
      const schemas = yield* Effect.promise(async () =>
        (await readers.query<{ nspname: string }>("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'copy%' ORDER BY 1")).rows.map((r) => r.nspname))
      // the rebuild builds the secondary indexes after the load: the copy has every index a
      // migrated schema has, the same definitions
      yield* Effect.scoped(PostgresStore.make({ url, schema: "migrated", pool: 1 }))
      const indexes = (schema: string) =>
        Effect.promise(async () =>
          (await readers.query<{ definition: string }>("SELECT replace(indexdef, $1, '') AS definition FROM pg_indexes WHERE schemaname = $2 ORDER BY indexname", [`${schema}.`, schema]))
            .rows.map((r) => r.definition))
      const migrated = yield* indexes("migrated")
      assert.isAbove(migrated.length, 20)
      assert.deepStrictEqual(yield* indexes("copy"), migrated)
      yield* Effect.promise(() => readers.end())

      assert.strictEqual(result.records, records.length)
      assert.deepStrictEqual(failures, [])
      assert.notStrictEqual(after, before)
      assert.include(after, `"checkpoint":"sqlite:${records.at(-1)!.offset}"`)
      const distinct = new Set(seen)
      assert.isTrue(seen.length > 50, `only ${seen.length} reads`)
      // every read saw the old complete copy or the new complete copy, and on each connection
      // the old ones came first
      assert.deepStrictEqual([...distinct].sort(), [before, after].sort())
      for (const mine of sequences) {
        const firstNew = mine.indexOf(after)
        assert.isTrue(firstNew === -1 || mine.slice(firstNew).every((s) => s === after), "a connection read the old copy after the new one")
      }
      // the rebuilt schema took the name; the old copy is gone
      assert.deepStrictEqual(schemas, ["copy"])
    }), 120_000)
})
