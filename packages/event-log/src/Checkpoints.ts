/**
 * Checkpoints: where a consumer resumes.
 *
 * A checkpoint is an opaque string produced by the log with each delivery. Semantics:
 * - SQLite log: `sqlite:<offset>`, the offset of the last record handled; resume at offset + 1.
 * - Kafka log: `kafka:{"<partition>":"<next offset>",...}`, per partition the next Kafka offset
 *   to consume (Kafka's own commit convention). Partitions absent start from the beginning.
 *   Each delivery's checkpoint covers every partition seen so far, so storing the latest one
 *   is enough. Since several servers relay into one topic, a partition's entry may instead be
 *   `{"next":"<next offset>","seen":{"<origin>":<outbox offset>,...}}`: per relaying outbox
 *   (origin) the highest outbox offset delivered, so a relay repeat (same record, sent again
 *   after a crash between the broker's ack and the relay cursor) is dropped even after a
 *   restart (docs/architecture.md §4.18).
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

/** Per partition, per origin (relaying outbox): the highest outbox offset delivered. */
export type KafkaSeen = ReadonlyMap<number, ReadonlyMap<string, number>>

export interface KafkaState {
  /** Per partition, the next Kafka offset to consume. */
  readonly next: Map<number, string>
  readonly seen: Map<number, Map<string, number>>
}

/** The checkpoint of `next` with the relay high-water marks of `seen` (see the module comment). */
export const kafkaWithSeen = (next: ReadonlyMap<number, string>, seen: KafkaSeen): Checkpoint => {
  const parts: Array<string> = []
  for (const p of [...next.keys()].sort((a, b) => a - b)) {
    const origins = seen.get(p)
    const o = JSON.stringify(next.get(p)!)
    if (origins === undefined || origins.size === 0) parts.push(`"${p}":${o}`)
    else {
      const marks = [...origins].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([origin, at]) => `${JSON.stringify(origin)}:${at}`)
      parts.push(`"${p}":{"next":${o},"seen":{${marks.join(",")}}}`)
    }
  }
  return `kafka:{${parts.join(",")}}`
}

const DIGITS = /^[0-9]+$/

/** Both forms of a Kafka checkpoint; `undefined` when it is not one. */
export const parseKafkaState = (checkpoint: Checkpoint): KafkaState | undefined => {
  if (!checkpoint.startsWith("kafka:")) return undefined
  try {
    const value: unknown = JSON.parse(checkpoint.slice("kafka:".length))
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
    const next = new Map<number, string>()
    const seen = new Map<number, Map<string, number>>()
    for (const [p, entry] of Object.entries(value)) {
      if (!DIGITS.test(p)) return undefined
      if (typeof entry === "string") {
        if (!DIGITS.test(entry)) return undefined
        next.set(Number(p), entry)
        continue
      }
      if (typeof entry !== "object" || entry === null) return undefined
      const { next: o, seen: marks } = entry as { readonly next?: unknown; readonly seen?: unknown }
      if (typeof o !== "string" || !DIGITS.test(o) || typeof marks !== "object" || marks === null || Array.isArray(marks)) return undefined
      const origins = new Map<string, number>()
      for (const [origin, at] of Object.entries(marks)) {
        if (typeof at !== "number" || !Number.isSafeInteger(at) || at < 0) return undefined
        origins.set(origin, at)
      }
      next.set(Number(p), o)
      seen.set(Number(p), origins)
    }
    return { next, seen }
  } catch {
    return undefined
  }
}

/** The next offsets of a Kafka checkpoint (either form); `undefined` when it is not one. */
export const parseKafka = (checkpoint: Checkpoint): Map<number, string> | undefined => parseKafkaState(checkpoint)?.next
