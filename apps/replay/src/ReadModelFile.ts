/**
 * Read-model files (the output of `replay`, the live file of `verify`, the `--db` of `export`),
 * opened read-only, and the shape of their tables as the comparison needs it.
 */
import { SqliteDatabase } from "@ocs/sqlite"
import { ReadModels } from "@ocs/read-models"
import { Effect, type Scope } from "effect"
import * as NodeFs from "node:fs"
import { InputFileError } from "./ReplayError.ts"

/** The projected tables, as `ReadModels.digest` covers them (checkpoints and bookkeeping are not projected). */
export const PROJECTED_TABLES: ReadonlyArray<string> = ReadModels.projectedTables

/** Columns that say which observation a row holds, not what it holds (left out of comparisons, as in the digest). */
const bookkeeping = (table: string, column: string) =>
  column.startsWith("last_") || (table === "unknown_events" && (column === "offset" || column === "received_at"))

/** Columns holding JSON text (shown field by field in differences, embedded as JSON in NDJSON). */
export const JSON_COLUMNS: ReadonlySet<string> = new Set(["record", "lines", "registered_events", "data", "body"])

export interface TableSpec {
  readonly name: string
  /** Primary key columns, in key order. */
  readonly key: ReadonlyArray<string>
  /** Compared columns (content, no bookkeeping). */
  readonly content: ReadonlyArray<string>
  /** Every column, in table order. */
  readonly columns: ReadonlyArray<string>
  readonly tenantScoped: boolean
}

export const open = Effect.fnUntraced(function*(filename: string, what: string): Effect.fn.Return<SqliteDatabase.Handle, InputFileError | SqliteDatabase.SqliteError, Scope.Scope> {
  if (!NodeFs.existsSync(filename)) {
    return yield* new InputFileError({ filename, message: `${what} not found: ${filename}` })
  }
  const db = yield* SqliteDatabase.make({ filename, readonly: true, synchronous: "NORMAL" })
  const ok = yield* db.use("inspect", (_, client) =>
    client.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'products'").get() !== undefined)
  if (!ok) return yield* new InputFileError({ filename, message: `${filename} is not a read-model file (it has no products table)` })
  return db
})

export const tables = (db: SqliteDatabase.Handle) =>
  db.use("tables", (_, client) =>
    (client.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '__drizzle%' ORDER BY name").all() as Array<{ name: string }>)
      .map((r) => r.name))

export const spec = (db: SqliteDatabase.Handle, table: string) =>
  db.use("table_info", (_, client): TableSpec => {
    const info = client.prepare(`PRAGMA table_info("${table.replaceAll('"', '""')}")`).all() as Array<{ name: string; pk: number }>
    const key = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name)
    const columns = info.map((c) => c.name)
    return {
      name: table,
      key,
      content: columns.filter((c) => !key.includes(c) && !bookkeeping(table, c)),
      columns,
      tenantScoped: columns.includes("app_id") && columns.includes("business_id")
    }
  })

/** Rows per projected table (of one tenant when given). */
export const rowCounts = (db: SqliteDatabase.Handle, tenant: { readonly appId: string; readonly businessId: string } | undefined) =>
  db.use("count", (_, client) => {
    const out: Record<string, number> = {}
    for (const table of PROJECTED_TABLES) {
      const where = tenant === undefined ? "" : " WHERE app_id = ? AND business_id = ?"
      const statement = client.prepare(`SELECT COUNT(*) AS n FROM ${table}${where}`)
      const row = (tenant === undefined ? statement.get() : statement.get(tenant.appId, tenant.businessId)) as { n: number }
      out[table] = row.n
    }
    return out
  })
