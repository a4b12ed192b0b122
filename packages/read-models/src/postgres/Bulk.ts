/**
 * The bulk paths of the Postgres store (docs/architecture.md §4.34, "Speed"): what keeps a
 * large load fast without touching the server's settings.
 *
 * - Statistics as the tables grow. A schema filled from empty has no statistics until
 *   autovacuum's analyze comes round, and without them the planner cannot tell the primary key
 *   from a secondary index with the same tenant prefix: a line's "parent holds the event" check
 *   probed `orders` through `orders_tenant_status` (every order of the tenant, filtered), and a
 *   clear joined `order_items` through `order_items_tenant_product`, so each batch cost more
 *   than the last (measured: the lines and clears took two thirds of a rebuild). `analyzer`
 *   analyzes the projected tables' key columns each time the records applied since the store
 *   opened double.
 * - A rebuild loads first and indexes after: the new schema's secondary indexes (not the keys,
 *   which the conflict rule needs) are dropped before the load and built once after it
 *   (`dropSecondaryIndexes`, `createIndexes`), before the swap makes the copy visible.
 */
import type pg from "pg"
import { projectedTables } from "../projections/index.ts"
import { quote } from "../projections/Projection.ts"

/**
 * What the planner needs to choose the key: the table's size and the statistics of its key
 * columns, not of the large record texts and their jsonb, which make a full ANALYZE cost
 * seconds. Autovacuum analyzes every column later.
 */
const analyzeList = (schema?: string) =>
  projectedTables.map((t) => `${schema === undefined ? "" : `"${schema}".`}${t.name} (${t.key.map(quote).join(", ")})`).join(", ")

/** The first analyze comes after this many records; then each time the count doubles. */
const FIRST_ANALYZE = 2000

/**
 * Analyzes the projected tables of the pool's schema when the records applied since the store
 * opened reach 2,000, 4,000, 8,000, ...: a few analyzes over any load (about 10 for a million
 * records), each a sample of at most 30,000 rows per table.
 */
export const analyzer = (pool: pg.Pool) => {
  let applied = 0
  let next = FIRST_ANALYZE
  return async (records: number): Promise<void> => {
    applied += records
    if (applied < next) return
    while (next <= applied) next *= 2
    await pool.query(`ANALYZE ${analyzeList()}`)
  }
}

/**
 * Drops the secondary indexes of `schema` (every index that is not unique and backs no
 * constraint: a unique index may be what an upsert's ON CONFLICT names) and returns their
 * definitions (`pg_indexes.indexdef`, schema-qualified) for `createIndexes`.
 */
export const dropSecondaryIndexes = async (client: pg.Pool | pg.Client, schema: string): Promise<ReadonlyArray<string>> => {
  const found = await client.query<{ name: string; definition: string }>(
    `SELECT i.indexname AS name, i.indexdef AS definition FROM pg_indexes i
     WHERE i.schemaname = $1 AND i.indexdef NOT LIKE 'CREATE UNIQUE %' AND NOT EXISTS (
       SELECT 1 FROM pg_constraint c JOIN pg_class x ON x.oid = c.conindid JOIN pg_namespace n ON n.oid = x.relnamespace
       WHERE n.nspname = i.schemaname AND x.relname = i.indexname)
     ORDER BY 1`,
    [schema]
  )
  for (const index of found.rows) await client.query(`DROP INDEX "${schema}"."${index.name}"`)
  return found.rows.map((index) => index.definition)
}

/** Builds the indexes `dropSecondaryIndexes` dropped, then analyzes the key columns of the schema's tables. */
export const createIndexes = async (client: pg.Pool | pg.Client, schema: string, definitions: ReadonlyArray<string>): Promise<void> => {
  for (const definition of definitions) await client.query(definition)
  await client.query(`ANALYZE ${analyzeList(schema)}`)
}
