/**
 * The PostgreSQL tables are generated from the SQLite declaration (src/postgres/Tables.ts):
 * every SQLite table has its twin with the same columns, the migrations create them on a real
 * server, large ids and JSON stay exact, and every statement of the registry is valid there.
 */
import { assert, describe, it } from "@effect/vitest"
import { databaseOfFile, postgresUnavailable } from "@ocs/postgres-server/testing"
import { Tables } from "@ocs/read-models"
import { PostgresStore, PostgresTables } from "@ocs/read-models/postgres"
import { getTableConfig as pgConfig, PgTable } from "drizzle-orm/pg-core"
import { getTableConfig as sqliteConfig, SQLiteTable } from "drizzle-orm/sqlite-core"
import { is } from "drizzle-orm"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { statements } from "../../src/postgres/Statements.ts"

const database = databaseOfFile()

const sqliteTables = Object.values(Tables).filter((t) => is(t, SQLiteTable)).map((t) => sqliteConfig(t as SQLiteTable))
const pgTables = new Map(Object.values(PostgresTables).filter((t) => is(t, PgTable)).map((t) => pgConfig(t as PgTable)).map((c) => [c.name, c] as const))

describe("the PostgreSQL tables, generated", () => {
  it("every SQLite table has its twin: same columns (plus a jsonb beside each JSON text), same key and indexes", () => {
    assert.isAbove(sqliteTables.length, 15)
    for (const table of sqliteTables) {
      const twin = pgTables.get(table.name)
      assert.isDefined(twin, `no PostgreSQL table ${table.name}`)
      const json = table.columns.filter((c) => PostgresTables.JSON_COLUMNS.has(c.name)).map((c) => PostgresTables.jsonColumn(c.name))
      assert.deepStrictEqual(twin!.columns.map((c) => c.name).sort(), [...table.columns.map((c) => c.name), ...json].sort(), table.name)
      assert.deepStrictEqual(twin!.indexes.map((i) => i.config.name).sort(), table.indexes.map((i) => i.config.name).sort(), table.name)
      assert.deepStrictEqual(twin!.primaryKeys.map((k) => k.columns.map((c) => c.name)), table.primaryKeys.map((k) => k.columns.map((c) => c.name)), table.name)
      for (const column of twin!.columns) assert.notStrictEqual(column.getSQLType(), "real", `${table.name}.${column.name}`)
    }
    assert.strictEqual(pgTables.size, sqliteTables.length)
  })
})

describe.skipIf(postgresUnavailable())("the PostgreSQL tables on a real server", () => {
  it.live("migrate into a schema; every statement of the projector prepares there; ids and JSON stay exact", () =>
    Effect.gen(function*() {
      const store = yield* PostgresStore.make({ url: database(), schema: "tables_test", pool: 1 })
      const tables = yield* store.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = 'tables_test'")
      for (const name of pgTables.keys()) assert.isTrue(tables.some((t) => t.table_name === name), name)
      for (const statement of statements) {
        yield* store.query(`PREPARE check_statement AS ${statement.sql}`)
        yield* store.query("DEALLOCATE check_statement")
      }
      // docs/postgres.md's cookbook: every query prepares against the tables as migrated.
      const cookbook = [...readFileSync(new URL("../../../../docs/postgres.md", import.meta.url), "utf8").matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!.trim().replace(/;$/, ""))
      assert.isAtLeast(cookbook.length, 5)
      for (const query of cookbook) {
        yield* store.query(`PREPARE cookbook AS ${query}`)
        yield* store.query("DEALLOCATE cookbook")
      }
      // A second open finds the schema migrated and changes nothing.
      yield* PostgresStore.make({ url: database(), schema: "tables_test", pool: 1 })
      const big = "9007199254740993001"
      const record = `{"id":${big},"price":12345678901234567890.5,"name":"Đồng hồ"}`
      yield* store.query(
        `INSERT INTO products (app_id, business_id, id, record, deleted, last_event_id, last_offset, last_index, last_source, last_received_at)
         VALUES ('1', $1, $1, $2, 0, 'e', 1, 0, 'sync', 0)`, [big, record])
      const [row] = yield* store.query<{ id: string; record: string; exact_id: string; price: string; name: string }>(
        "SELECT id, record, (record_json->>'id') AS exact_id, (record_json->>'price') AS price, record_json->>'name' AS name FROM products")
      assert.deepStrictEqual(row, { id: big, record, exact_id: big, price: "12345678901234567890.5", name: "Đồng hồ" })
    }).pipe(Effect.scoped), 60_000)
})
