/**
 * The record as stored: a row of the `records` table, or the same shape as the value of a
 * Kafka message. It is the record's field list with `meta` as its JSON text and the tenant
 * key beside it; the check, the column list of a page query, and the conversions both ways
 * are derived from that list.
 */
import { Ids } from "@ocs/protocol"
import * as Json from "@ocs/protocol/Json"
import { Result } from "effect"
import { RecordDecodeError } from "../EventLogError.ts"
import { type LogRecord } from "../LogRecord.ts"
import { records } from "../Tables.ts"
import * as Field from "./fields.ts"
import { recordFields } from "./recordFields.ts"

const rowFields = {
  ...recordFields,
  meta: Field.string,
  /** Absent when a query does not select it (the replay tool's). */
  tenant: Field.optional(Field.string)
}

export type Row = Field.Shape<typeof rowFields>

/** `undefined` for a valid stored row, else what is wrong with it, naming the field. */
export const checkRow = Field.check(rowFields)

type Column = keyof typeof records.$inferSelect

// Every field of the row is a column of `records` (Tables.ts): the compiler holds the list to
// the table (this assignment fails for a field without a column).
const rowColumns: ReadonlyArray<Column> = Object.keys(rowFields) as Array<keyof typeof rowFields>

/**
 * The select list of a page query: the record's columns (not the tenant, which the record does
 * not carry), each aliased to its field name, what `rowToRecord` decodes: `"app_id" AS "appId"`.
 * The SQL names come from drizzle's declaration.
 */
export const recordColumns: string = rowColumns
  .filter((key) => Object.hasOwn(recordFields, key))
  .map((key) => `"${records[key].name}" AS "${key}"`)
  .join(", ")

/** Decodes a stored row (or the same shape from a Kafka message) into a LogRecord. */
export const rowToRecord = (row: unknown, where: string): Result.Result<LogRecord, RecordDecodeError> => {
  const problem = checkRow(row)
  if (problem !== undefined) return Result.fail(new RecordDecodeError({ where, message: `stored record does not decode: ${problem}` }))
  const r = row as Row
  // Meta "{}" is by far the most common value: skip the parser for it.
  const meta = r.meta === "{}" ? Result.succeed({}) : Json.parse(r.meta)
  if (Result.isFailure(meta) || !Field.isPlainObject(meta.success)) {
    return Result.fail(new RecordDecodeError({ where, message: `record ${r.offset} (${r.id}): field "meta" is not a JSON object` }))
  }
  // Written out rather than copied in a loop over the field list, so that every record gets
  // one hidden class (a replay decodes millions); the compiler holds it to the list, since
  // every key of LogRecord but `kafka` is required.
  return Result.succeed({
    offset: r.offset,
    id: r.id,
    appId: r.appId,
    businessId: r.businessId,
    source: r.source,
    type: r.type,
    receivedAt: r.receivedAt,
    body: r.body,
    dedupeKey: r.dedupeKey,
    meta: meta.success,
    entityId: r.entityId
  } satisfies Required<Omit<LogRecord, "kafka">>)
}

/** The stored shape of a record (what a Kafka message carries), with the tenant key. */
export const recordToRow = (record: LogRecord): Required<Row> => ({
  offset: record.offset,
  id: record.id,
  tenant: Ids.tenantKey(record),
  appId: record.appId,
  businessId: record.businessId,
  source: record.source,
  type: record.type,
  receivedAt: record.receivedAt,
  body: record.body,
  dedupeKey: record.dedupeKey,
  meta: Json.stringify(record.meta),
  entityId: record.entityId
})
