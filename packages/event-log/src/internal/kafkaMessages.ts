/**
 * The Kafka log's messages: what a message carries (the stored row, the outbox's origin, the
 * record id as a header) and how a consumer drops the repeats a relay may send.
 */
import { Result } from "effect"
import { RecordDecodeError } from "../EventLogError.ts"
import type { LogRecord } from "../LogRecord.ts"
import { recordToRow, rowToRecord } from "./recordRow.ts"

export const HEADER_ID = "ocs-record-id"
export const HEADER_ORIGIN = "ocs-origin"
/** Where the outbox file keeps its origin id (a row of its `consumer_checkpoints`). */
export const ORIGIN_ROW = "@kafka-relay-origin"

export const headerText = (value: Buffer | string | ReadonlyArray<Buffer | string> | undefined): string | undefined =>
  value === undefined ? undefined : Array.isArray(value) ? headerText(value[0]) : String(value)

/**
 * The message value: the stored row (meta as its JSON text; `offset` is the outbox offset), so
 * decoding is the row decoder's, and the outbox's origin. In the value rather than in headers:
 * the value is parsed anyway, while every header costs an encode and a decode per consumer.
 */
export const encodeValue = (record: LogRecord, origin: string) => JSON.stringify({ v: 1, origin, ...recordToRow(record) })

export const decodeValue = (value: Buffer | null, where: string): Result.Result<{ readonly record: LogRecord; readonly origin: string | undefined }, RecordDecodeError> => {
  if (value === null) return Result.fail(new RecordDecodeError({ where, message: "message without value" }))
  let row: unknown
  try {
    row = JSON.parse(value.toString("utf8"))
  } catch (cause) {
    return Result.fail(new RecordDecodeError({ where, message: `message value is not JSON: ${String(cause)}` }))
  }
  const origin = (row as { readonly origin?: unknown } | null)?.origin
  return Result.map(rowToRecord(row, where), (record) => ({ record, origin: typeof origin === "string" ? origin : undefined }))
}

/**
 * Drops relay repeats: per partition, per origin, the highest outbox offset delivered (see the
 * module comment of KafkaEventLog.ts). Messages without an origin (relayed before origins
 * existed) fall back to the record ids remembered in memory.
 */
export const relayRepeats = (seen: Map<number, Map<string, number>>, fresh: (id: string) => boolean) =>
  (record: LogRecord, partition: number): boolean => {
    const origin = record.kafka?.origin
    const at = record.kafka?.outboxOffset
    if (origin === undefined || at === undefined) return !fresh(record.id)
    let marks = seen.get(partition)
    if (marks === undefined) seen.set(partition, marks = new Map())
    const high = marks.get(origin)
    if (high !== undefined && at <= high) return true
    marks.set(origin, at)
    return false
  }

/** Remembers the last `capacity` ids (insertion order), to drop repeats. */
export const recentIds = (capacity: number) => {
  const seen = new Set<string>()
  return (id: string): boolean => {
    if (seen.has(id)) return false
    seen.add(id)
    if (seen.size > capacity) seen.delete(seen.values().next().value!)
    return true
  }
}
