/**
 * The event-log file's read queries that are not pages: its head, how far a reader is behind,
 * and the Kafka relay's cursor. One place for each, used by the live log (SqliteEventLog, the
 * Kafka outbox) and by read-only openers (LogFile): nothing outside this package writes SQL
 * against the log's tables.
 */
import type Database from "better-sqlite3"
import type { Lag, Offset, TenantFilter } from "../LogRecord.ts"

/** The last offset (0 when empty), of the whole log or of one tenant. */
export const head = (client: Database.Database, tenant: TenantFilter = "all"): Offset =>
  tenant === "all"
    ? (client.prepare(`SELECT coalesce(max("offset"), 0) AS head FROM records`).get() as { head: number }).head
    : (client.prepare(`SELECT coalesce(max("offset"), 0) AS head FROM records WHERE tenant = ?`).get(tenant) as { head: number }).head

/**
 * How far behind a reader that handled everything up to `after` is, at `now`. For the whole log
 * the record count is the distance in offsets (offsets are dense: one per committed record);
 * for one tenant the records after `after` are counted in its (tenant, offset) index.
 */
export const lagAfter = (client: Database.Database, after: Offset, now: number, tenant: TenantFilter = "all"): Lag => {
  const oldest = (tenant === "all"
    ? client.prepare(`SELECT received_at AS at FROM records WHERE "offset" > ? ORDER BY "offset" LIMIT 1`).get(after)
    : client.prepare(`SELECT received_at AS at FROM records WHERE tenant = ? AND "offset" > ? ORDER BY "offset" LIMIT 1`).get(tenant, after)) as
      | { at: number }
      | undefined
  const records = oldest === undefined
    ? 0
    : tenant === "all"
    ? Math.max(0, head(client) - after)
    : (client.prepare(`SELECT count(*) AS n FROM records WHERE tenant = ? AND "offset" > ?`).get(tenant, after) as { n: number }).n
  return { records, seconds: oldest === undefined ? 0 : Math.max(0, (now - oldest.at) / 1000) }
}

/** Kafka mode: the last outbox offset the broker acknowledged for `topic` (0 before the first). */
export const relayedOffset = (client: Database.Database, topic: string): Offset =>
  (client.prepare(`SELECT relayed_offset AS at FROM relay_state WHERE name = ?`).get(topic) as { at: number } | undefined)?.at ?? 0

/** Whether the file holds a table (files from older versions, opened read-only, may lack one). */
export const hasTable = (client: Database.Database, name: string): boolean =>
  client.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined

export const hasIndex = (client: Database.Database, name: string): boolean =>
  client.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").get(name) !== undefined
