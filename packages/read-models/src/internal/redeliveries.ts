/**
 * Kafka mode: a fact that reached the topic twice (docs/architecture.md §4.18). Each server
 * appends what it receives and dedupes only what it received itself, so a webhook redelivered
 * to another server, or a page a new owner fetched again, is a second record under the same
 * dedupe key. The first position applied for each (tenant, dedupe key) is kept in
 * `applied_dedupe_keys`; a record with that key at another position is not applied, and a
 * record seen again at its own position (a replay after a crash) still is, so this never
 * drops the original. Every server reads the partition of a tenant in the same order, so they
 * all keep the same copy. Synchronous: runs inside the projection's transaction.
 */
import type Database from "better-sqlite3"

interface Keyed {
  readonly offset: number
  readonly appId: string
  readonly businessId: string | null
  readonly dedupeKey: string | null
  readonly receivedAt: number
  readonly kafka?: unknown
}

export const make = (client: Database.Database, windowMillis: number) => {
  const insert = client.prepare<[string, string, string, number, number]>(
    "INSERT OR IGNORE INTO applied_dedupe_keys (app_id, business_id, dedupe_key, offset, received_at) VALUES (?, ?, ?, ?, ?)"
  )
  const first = client.prepare<[string, string, string], { offset: number }>(
    "SELECT offset FROM applied_dedupe_keys WHERE app_id = ? AND business_id = ? AND dedupe_key = ?"
  )
  const prune = client.prepare<[number]>("DELETE FROM applied_dedupe_keys WHERE received_at < ?")
  let prunedAt = 0
  return {
    /** True when the record is another copy of a fact applied at another position. */
    repeated: (record: Keyed): boolean => {
      if (record.kafka === undefined || record.dedupeKey === null) return false
      const businessId = record.businessId ?? ""
      if (insert.run(record.appId, businessId, record.dedupeKey, record.offset, record.receivedAt).changes !== 0) return false
      return first.get(record.appId, businessId, record.dedupeKey)?.offset !== record.offset
    },
    /** Forgets keys older than the window (at most once a minute). */
    prune: (now: number): void => {
      if (now - prunedAt < 60_000) return
      prunedAt = now
      prune.run(now - windowMillis)
    }
  }
}
