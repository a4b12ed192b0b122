/**
 * Errors of the read models. Database failures are the shared `SqliteError`; reading the log
 * can fail with any `EventLogError`.
 */
import type { EventLogError } from "@ocs/event-log/EventLogError"
import { SqliteError } from "@ocs/sqlite"
import { Schema } from "effect"

export { SqliteError }

/** `rebuild` writes a new file and refuses to overwrite one. */
export class RebuildTargetExists extends Schema.TaggedError<RebuildTargetExists>()("RebuildTargetExists", {
  filename: Schema.String,
  message: Schema.String
}) {}

/** The stored checkpoint is not one `catchUp` can resume from (e.g. a Kafka checkpoint). */
export class UnsupportedCheckpoint extends Schema.TaggedError<UnsupportedCheckpoint>()("UnsupportedCheckpoint", {
  consumer: Schema.String,
  checkpoint: Schema.String,
  message: Schema.String
}) {}

export type ReadModelsError = SqliteError | EventLogError | RebuildTargetExists | UnsupportedCheckpoint
