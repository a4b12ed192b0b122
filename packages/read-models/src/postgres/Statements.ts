/**
 * The projector's statements in PostgreSQL, derived from the same registry the SQLite projector
 * prepares (../projections/index.ts): no second copy of any rule. Upserts and order/bill lines
 * are written from their shape (`Statement.shape`) as one statement per run of rows, with one
 * array parameter per column (`unnest`), so a page of 100 products is one round trip; the few
 * other statements are translated from their SQLite text. The conflict rule is the very SQL of
 * `newerThan` (../projections/Projection.ts), which both dialects read alike.
 */
import { getTableConfig, type PgTable } from "drizzle-orm/pg-core"
import * as Projections from "../projections/index.ts"
import { BOOKKEEPING, newerThan, parentHolds, quote, type Statement, type TableSpec } from "../projections/Projection.ts"
import * as Tables from "./Tables.ts"

/**
 * A statement as the Postgres store runs it. `table`: the table it writes; `lines`: it writes
 * order or bill lines, which the store runs after every other table of the batch (see
 * ./PostgresStore.ts, `execute`).
 */
export type PgStatement =
  /**
   * Rows batched: `sql` binds one array per column of `columns` (the positions of the row's
   * parameters it takes; all of them when undefined). `key`: the leading parameters that name
   * the row (a run is cut where one repeats), 0 when rows can never collide.
   */
  | {
    readonly kind: "batch"
    readonly name: string
    readonly table: string
    readonly lines: boolean
    readonly sql: string
    readonly width: number
    readonly key: number
    readonly columns?: ReadonlyArray<number> | undefined
  }
  /** One row at a time. */
  | { readonly kind: "single"; readonly name: string; readonly table: string; readonly lines: boolean; readonly sql: string }

/** Column name to SQL type, per table, from the generated tables (./Tables.ts). */
const types: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map(
  Object.values(Tables).flatMap((value) => {
    if (typeof value !== "object" || value === null) return []
    try {
      const config = getTableConfig(value as PgTable)
      return [[config.name, new Map(config.columns.map((c) => [c.name, c.getSQLType()]))] as const]
    } catch {
      return []
    }
  })
)

export const typeOf = (table: string, column: string): string => {
  const type = types.get(table)?.get(column)
  if (type === undefined) throw new Error(`read models in PostgreSQL: no column ${table}.${column}`)
  return type
}

const arrays = (table: string, columns: ReadonlyArray<string>, from = 1) =>
  columns.map((c, i) => `$${from + i}::${typeOf(table, c)}[]`).join(", ")

const upsert = (statement: Statement, table: TableSpec): PgStatement => {
  const columns = [...table.key, ...table.content, ...BOOKKEEPING]
  const set = [...table.content, ...BOOKKEEPING].map((c) => `${quote(c)} = excluded.${quote(c)}`).join(", ")
  return {
    kind: "batch",
    name: statement.name,
    table: table.name,
    lines: false,
    width: columns.length,
    key: table.key.length,
    sql: `INSERT INTO ${table.name} (${columns.map(quote).join(", ")}) SELECT * FROM unnest(${arrays(table.name, columns)})
    ON CONFLICT (${table.key.join(", ")}) DO UPDATE SET ${set} WHERE ${newerThan(table)}`
  }
}

/**
 * Lines: the SQLite rule binds the parent check (`parentHolds`) per row; here it joins each
 * row's own four values. Only the lines of the event the parent holds pass the check, and an
 * event's lines have distinct keys, so rows of one run never collide (`key` 0).
 */
const line = (statement: Statement, table: TableSpec, parent: string): PgStatement => {
  const columns = [...table.key, ...table.content]
  const n = columns.length
  const check = parentHolds(parent)
    .replace("p.app_id = ?", "p.app_id = v.h_app").replace("p.business_id = ?", "p.business_id = v.h_business")
    .replace("p.id = ?", "p.id = v.h_parent").replace("p.last_event_id = ?", "p.last_event_id = v.h_event")
  const set = table.content.map((c) => `${quote(c)} = excluded.${quote(c)}`).join(", ")
  return {
    kind: "batch",
    name: statement.name,
    table: table.name,
    lines: true,
    width: n + 4,
    key: 0,
    sql: `INSERT INTO ${table.name} (${columns.map(quote).join(", ")})
    SELECT ${columns.map((_, i) => `v.c${i}`).join(", ")}
    FROM unnest(${arrays(table.name, columns)}, $${n + 1}::text[], $${n + 2}::text[], $${n + 3}::text[], $${n + 4}::text[])
      AS v(${columns.map((_, i) => `c${i}`).join(", ")}, h_app, h_business, h_parent, h_event)
    WHERE ${check}
    ON CONFLICT (${table.key.join(", ")}) DO UPDATE SET ${set}`
  }
}

/** The lines of a parent that holds the event, deleted: binds tenant, parent id, then tenant, parent id, event id. */
const clear = (statement: Statement, table: TableSpec, parent: string): PgStatement => ({
  kind: "batch",
  name: statement.name,
  table: table.name,
  lines: true,
  width: 4,
  key: 0,
  columns: [0, 1, 2, 6],
  sql: `DELETE FROM ${table.name} t USING unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v(h_app, h_business, h_parent, h_event)
    WHERE t.app_id = v.h_app AND t.business_id = v.h_business AND t.${table.key[2]} = v.h_parent
      AND EXISTS (SELECT 1 FROM ${parent} p WHERE p.app_id = v.h_app AND p.business_id = v.h_business AND p.id = v.h_parent AND p.last_event_id = v.h_event)`
})

/** The SQLite text of the other statements, in PostgreSQL: placeholders, `OR IGNORE`, `max`, a reserved column name. */
export const translate = (sql: string): string => {
  let n = 0
  let out = sql.replace(/\?/g, () => `$${++n}`)
  if (/^\s*INSERT OR IGNORE INTO/i.test(out)) out = `${out.replace(/INSERT OR IGNORE INTO/i, "INSERT INTO")} ON CONFLICT DO NOTHING`
  if (/INSERT OR REPLACE/i.test(out)) throw new Error(`read models in PostgreSQL: INSERT OR REPLACE needs a shape: ${sql}`)
  return out
    .replace(/\bmax\(/g, "greatest(")
    .replace(/([(,]\s*)offset(\s*[,)])/g, `$1"offset"$2`)
}

const of = (statement: Statement): PgStatement => {
  const shape = statement.shape
  if (shape?.kind === "upsert") return upsert(statement, shape.table)
  if (shape?.kind === "line") return line(statement, shape.table, shape.parent)
  if (shape?.kind === "clear") return clear(statement, shape.table, shape.parent)
  const table = /^\s*(?:INSERT(?: OR \w+)? INTO|UPDATE|DELETE FROM)\s+(\w+)/i.exec(statement.sql)?.[1]
  if (table === undefined) throw new Error(`read models in PostgreSQL: which table does ${statement.name} write?`)
  return { kind: "single", name: statement.name, table, lines: false, sql: translate(statement.sql) }
}

/** Every statement of the registry, by its id (the plans' `ops`). */
export const statements: ReadonlyArray<PgStatement> = Projections.statements.map(of)
