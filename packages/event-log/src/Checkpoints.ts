/**
 * Checkpoints: where a consumer resumes.
 *
 * A checkpoint is an opaque string produced by the log with each delivery. Semantics:
 * - SQLite log: `sqlite:<offset>`, the offset of the last record handled; resume at offset + 1.
 * - Kafka log: `kafka:{"<partition>":"<next offset>",...}`, per partition the next Kafka offset
 *   to consume (Kafka's own commit convention). Partitions absent start from the beginning.
 *   Each delivery's checkpoint covers every partition seen so far, so storing the latest one
 *   is enough.
 *
 * A projection saves its rows and its checkpoint in one transaction on its own file with
 * `save` (table `consumer_checkpoints`, see `Tables.consumerCheckpoints`), and resumes with
 * `subscribe(name, { from: load(...) })`: a replay or redelivery then applies exactly once.
 */
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3"
import { eq } from "drizzle-orm"
import { Option } from "effect"
import type { Checkpoint, Offset } from "./LogRecord.ts"
import { consumerCheckpoints } from "./Tables.ts"

/** DDL of the checkpoint table, for files not migrated with drizzle-kit. */
export const createTableSql =
  "CREATE TABLE IF NOT EXISTS `consumer_checkpoints` (`consumer` text PRIMARY KEY NOT NULL, `checkpoint` text NOT NULL, `updated_at` integer NOT NULL)"

/** Synchronous: call inside your `SqliteDatabase` transaction. */
export const save = (db: BetterSQLite3Database, consumer: string, checkpoint: Checkpoint, now: number = Date.now()): void => {
  db.insert(consumerCheckpoints)
    .values({ consumer, checkpoint, updatedAt: now })
    .onConflictDoUpdate({ target: consumerCheckpoints.consumer, set: { checkpoint, updatedAt: now } })
    .run()
}

export const load = (db: BetterSQLite3Database, consumer: string): Option.Option<Checkpoint> => {
  const row = db.select({ checkpoint: consumerCheckpoints.checkpoint }).from(consumerCheckpoints)
    .where(eq(consumerCheckpoints.consumer, consumer)).get()
  return row === undefined ? Option.none() : Option.some(row.checkpoint)
}

/** @internal encodings, shared by the two backends */
export const sqlite = (offset: Offset): Checkpoint => `sqlite:${offset}`

export const parseSqlite = (checkpoint: Checkpoint): Offset | undefined => {
  const match = /^sqlite:(0|[1-9][0-9]*)$/.exec(checkpoint)
  if (match === null) return undefined
  const offset = Number(match[1])
  return Number.isSafeInteger(offset) ? offset : undefined
}

export const kafka = (next: ReadonlyMap<number, string>): Checkpoint => {
  const entries = [...next.entries()].sort((a, b) => a[0] - b[0]).map(([p, o]) => [String(p), o] as const)
  return `kafka:${JSON.stringify(Object.fromEntries(entries))}`
}

export const parseKafka = (checkpoint: Checkpoint): Map<number, string> | undefined => {
  if (!checkpoint.startsWith("kafka:")) return undefined
  try {
    const value: unknown = JSON.parse(checkpoint.slice("kafka:".length))
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
    const out = new Map<number, string>()
    for (const [p, o] of Object.entries(value)) {
      if (!/^[0-9]+$/.test(p) || typeof o !== "string" || !/^[0-9]+$/.test(o)) return undefined
      out.set(Number(p), o)
    }
    return out
  } catch {
    return undefined
  }
}
