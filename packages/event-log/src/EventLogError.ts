/**
 * Failures of the event log, one tagged error per thing a caller can act on.
 */
import { Schema } from "effect"
import { SqliteError } from "@ocs/sqlite"

export { SqliteError }

/** A record handed to `append` breaks the record rules (bad appId, unknown source, ...). */
export class InvalidRecord extends Schema.TaggedError<InvalidRecord>()("InvalidRecord", {
  index: Schema.Number,
  message: Schema.String
}) {}

/** A stored record (SQLite row or Kafka message) does not decode: the file or topic is damaged. */
export class RecordDecodeError extends Schema.TaggedError<RecordDecodeError>()("RecordDecodeError", {
  where: Schema.String,
  message: Schema.String
}) {}

/** A checkpoint value that this log did not produce (another backend, or garbage). */
export class InvalidCheckpoint extends Schema.TaggedError<InvalidCheckpoint>()("InvalidCheckpoint", {
  checkpoint: Schema.String,
  message: Schema.String
}) {}

/** The Kafka broker cannot be reached (at start, or while reading the topic). */
export class KafkaUnavailable extends Schema.TaggedError<KafkaUnavailable>()("KafkaUnavailable", {
  brokers: Schema.Array(Schema.String),
  message: Schema.String,
  cause: Schema.Defect()
}) {}

/**
 * Kafka mode: an outbox record is larger than the broker accepts in one record batch (the
 * topic's `max.message.bytes`, which defaults to the broker's `message.max.bytes`). The relay
 * does not send it (the topic would refuse it, and every batch after it would wait): it keeps it
 * in the outbox as a relay dead letter and goes on. Raise the limit, then redrive it.
 */
export class RecordTooLarge extends Schema.TaggedError<RecordTooLarge>()("RecordTooLarge", {
  appId: Schema.String,
  businessId: Schema.NullOr(Schema.String),
  /** The record's outbox offset. */
  offset: Schema.Number,
  recordId: Schema.String,
  bytes: Schema.Number,
  limitBytes: Schema.Number,
  message: Schema.String
}) {}

/** The log was closed (its layer released) while the call was waiting. */
export class EventLogClosed extends Schema.TaggedError<EventLogClosed>()("EventLogClosed", {
  message: Schema.String
}) {}

export type EventLogError =
  | SqliteError
  | InvalidRecord
  | RecordDecodeError
  | InvalidCheckpoint
  | KafkaUnavailable
  | EventLogClosed

/** A file opened as an event log (`LogFile.open`) has no `records` table. */
export class NotAnEventLogFile extends Schema.TaggedError<NotAnEventLogFile>()("NotAnEventLogFile", {
  filename: Schema.String,
  message: Schema.String
}) {}
