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
