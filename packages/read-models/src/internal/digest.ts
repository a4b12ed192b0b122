/**
 * Deterministic digest of the projected content: per table, sha256 over its rows sorted by key,
 * content columns only. Bookkeeping (`last_*`: which event, offset, source and time a row came
 * from) and state that is not projected from the log (checkpoints) are left out,
 * so a rebuild and a live projection of the same log compare equal.
 */
import type Database from "better-sqlite3"
import * as Crypto from "node:crypto"
import { projectedTables } from "../projections/index.ts"
import { quote } from "../projections/Projection.ts"

/** Every projected table (the registry lists them with their projections, so a new one is covered). */
const tables = projectedTables.map((t) => [t.name, t.key, t.content] as const)

export interface Digest {
  /** sha256 (hex) of all tables together. */
  readonly digest: string
  /** Per table: sha256 (hex) and row count. */
  readonly tables: Readonly<Record<string, { readonly sha256: string; readonly rows: number }>>
}

/** `tenant` undefined: all tenants (application-level rows included). */
export const compute = (client: Database.Database, tenant: { readonly appId: string; readonly businessId: string } | undefined): Digest => {
  const all = Crypto.createHash("sha256")
  const out: Record<string, { sha256: string; rows: number }> = {}
  for (const [table, key, content] of tables) {
    const where = tenant === undefined ? "" : " WHERE app_id = ? AND business_id = ?"
    const statement = client.prepare(`SELECT ${[...key, ...content].map(quote).join(", ")} FROM ${table}${where} ORDER BY ${key.join(", ")}`).raw(true)
    const hash = Crypto.createHash("sha256")
    let rows = 0
    const iterator = tenant === undefined ? statement.iterate() : statement.iterate(tenant.appId, tenant.businessId)
    for (const row of iterator) {
      hash.update(JSON.stringify(row))
      hash.update("\n")
      rows++
    }
    const sha256 = hash.digest("hex")
    out[table] = { sha256, rows }
    all.update(`${table} ${sha256} ${rows}\n`)
  }
  return { digest: all.digest("hex"), tables: out }
}
