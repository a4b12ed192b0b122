/**
 * The field lists of the record, one per shape: what a caller appends (`newRecordFields`) and
 * what the log hands back (`recordFields`). LogRecord.ts derives the public types and the
 * append check from them; ./recordRow.ts derives the stored row, its check and its column list.
 */
import * as Field from "./fields.ts"

/** What a caller appends. Missing `id` becomes a UUIDv7, missing `receivedAt` the clock's now. */
export const newRecordFields = {
  id: Field.optional(Field.uuid),
  appId: Field.digits,
  /** null for application-level facts (webhooksEnabled). */
  businessId: Field.nullable(Field.digits),
  source: Field.source,
  /** The event name, or e.g. `product/list.page`. */
  type: Field.nonEmptyString,
  receivedAt: Field.optional(Field.safeInteger),
  /** The exact text received, never re-serialised. */
  body: Field.string,
  dedupeKey: Field.optional(Field.nullable(Field.string)),
  meta: Field.optional(Field.jsonObject),
  /** Entity the fact is about (product id, order id, ...) for audit lookups; else `meta.entityId`. */
  entityId: Field.optional(Field.nullable(Field.string))
}

/** A record as the log holds it. */
export const recordFields = {
  /**
   * Position in the log. SQLite: the file's offset. Kafka: `append` answers the outbox offset;
   * `read` and `subscribe` deliver the topic position (`topicPosition`), unique across servers.
   */
  offset: Field.safeInteger,
  id: Field.string,
  appId: Field.digits,
  businessId: Field.nullable(Field.digits),
  source: Field.source,
  type: Field.string,
  receivedAt: Field.safeInteger,
  body: Field.string,
  dedupeKey: Field.nullable(Field.string),
  meta: Field.jsonObject,
  entityId: Field.nullable(Field.string)
}
