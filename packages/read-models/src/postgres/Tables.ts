/**
 * The read-model tables in PostgreSQL, generated from the SQLite declaration (../Tables.ts and
 * ../projections/*): one definition, two dialects, no hand-kept twin (docs/architecture.md
 * §4.34). drizzle-kit reads this module (drizzle.pg.config.ts) to generate `drizzle-pg/`.
 *
 * Column types, so that what SQLite keeps exactly stays exact:
 * - text stays text (every id is text already: large ids never pass through a double);
 * - integer becomes bigint (offsets, epoch milliseconds; the autoincrement `seq` an identity);
 * - real becomes double precision, as in SQLite: an amount's exact digits are in its `_text`
 *   column beside it;
 * - a JSON body kept as exact text (`record`, `body`, `payload`, `data`) stays text, and gets a
 *   generated `<name>_json` jsonb column beside it for queries (NULL for the rare text jsonb
 *   cannot hold, a `\u0000` escape; the text is then the only copy).
 * Keys and indexes are the same as SQLite's, with the same names.
 */
import { is, SQL, sql } from "drizzle-orm"
import {
  bigint, doublePrecision, index, jsonb, type PgColumnBuilderBase, pgTable, primaryKey, text, uniqueIndex
} from "drizzle-orm/pg-core"
import { getTableConfig, SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core"
import * as Sqlite from "../Tables.ts"

/** Text columns that hold a JSON document (lossless JSON text as SQLite keeps it). */
export const JSON_COLUMNS: ReadonlySet<string> = new Set(["record", "body", "payload", "data"])

/** The generated jsonb column beside a JSON text column. */
export const jsonColumn = (name: string) => `${name}_json`

const jsonOf = (name: string): SQL =>
  sql.raw(`CASE WHEN strpos("${name}", '\\u0000') > 0 THEN NULL ELSE "${name}"::jsonb END`)

const columnOf = (column: SQLiteColumn): PgColumnBuilderBase => {
  const name = column.name
  let builder
  switch (column.columnType) {
    case "SQLiteText":
      builder = text(name)
      break
    case "SQLiteInteger":
    case "SQLiteBoolean":
    case "SQLiteTimestamp":
      builder = (column as unknown as { autoIncrement?: boolean }).autoIncrement === true
        ? bigint(name, { mode: "number" }).generatedByDefaultAsIdentity()
        : bigint(name, { mode: "number" })
      break
    case "SQLiteReal":
      builder = doublePrecision(name)
      break
    default:
      throw new Error(`read models in PostgreSQL: no mapping for ${column.columnType} (column ${name})`)
  }
  if (column.notNull) builder = builder.notNull()
  if (column.hasDefault && column.default !== undefined) {
    if (is(column.default, SQL)) throw new Error(`read models in PostgreSQL: column ${name} has an SQL default`)
    builder = builder.default(column.default as never)
  }
  return builder
}

/** The PostgreSQL twin of one SQLite table, generated: same name, columns, key and indexes. */
export const toPostgres = (table: SQLiteTable) => {
  const config = getTableConfig(table)
  const columns: Record<string, PgColumnBuilderBase> = {}
  const keyOfColumn = new Map<string, string>()
  for (const [key, value] of Object.entries(table)) if (is(value, SQLiteColumn)) keyOfColumn.set(value.name, key)
  for (const column of config.columns) {
    const key = keyOfColumn.get(column.name) ?? column.name
    let builder = columnOf(column)
    if (column.primary) builder = (builder as ReturnType<typeof text>).primaryKey()
    columns[key] = builder
    if (column.columnType === "SQLiteText" && JSON_COLUMNS.has(column.name)) {
      columns[`${key}Json`] = jsonb(jsonColumn(column.name)).generatedAlwaysAs(jsonOf(column.name))
    }
  }
  return pgTable(config.name, columns, (t) => {
    const byName = (name: string) => {
      const found = Object.values(t).find((c) => (c as { name?: string }).name === name)
      if (found === undefined) throw new Error(`read models in PostgreSQL: ${config.name} has no column ${name}`)
      return found as never
    }
    const names = (cols: ReadonlyArray<unknown>) =>
      cols.map((c) => {
        if (!is(c, SQLiteColumn)) throw new Error(`read models in PostgreSQL: ${config.name}: an index on an expression`)
        return byName(c.name)
      }) as [never, ...Array<never>]
    const extras = []
    for (const pk of config.primaryKeys) extras.push(primaryKey({ name: pk.getName(), columns: names(pk.columns) }))
    for (const ix of config.indexes) {
      if (ix.config.where !== undefined) throw new Error(`read models in PostgreSQL: ${ix.config.name}: a partial index`)
      extras.push((ix.config.unique ? uniqueIndex(ix.config.name) : index(ix.config.name)).on(...names(ix.config.columns)))
    }
    return extras
  })
}

export const consumerCheckpoints = toPostgres(Sqlite.consumerCheckpoints)
export const bills = toPostgres(Sqlite.bills)
export const billItems = toPostgres(Sqlite.billItems)
export const brands = toPostgres(Sqlite.brands)
export const categories = toPostgres(Sqlite.categories)
export const commands = toPostgres(Sqlite.commands)
export const customers = toPostgres(Sqlite.customers)
export const depots = toPostgres(Sqlite.depots)
export const documents = toPostgres(Sqlite.documents)
export const inventory = toPostgres(Sqlite.inventory)
export const orders = toPostgres(Sqlite.orders)
export const orderItems = toPostgres(Sqlite.orderItems)
export const payments = toPostgres(Sqlite.payments)
export const products = toPostgres(Sqlite.products)
export const unknownEvents = toPostgres(Sqlite.unknownEvents)
export const webhooksEnabled = toPostgres(Sqlite.webhooksEnabled)
export const vpagePages = toPostgres(Sqlite.vpagePages)
export const vpageUsers = toPostgres(Sqlite.vpageUsers)
export const vpageTags = toPostgres(Sqlite.vpageTags)
export const vpageConversations = toPostgres(Sqlite.vpageConversations)
export const vpageMessages = toPostgres(Sqlite.vpageMessages)
export const vpageCustomers = toPostgres(Sqlite.vpageCustomers)
export const appliedRecords = toPostgres(Sqlite.appliedRecords)
export const appliedDedupeKeys = toPostgres(Sqlite.appliedDedupeKeys)
export const quarantinedRecords = toPostgres(Sqlite.quarantinedRecords)
export const changeOutbox = toPostgres(Sqlite.changeOutbox)
export const passSeen = toPostgres(Sqlite.passSeen)
