/**
 * The one failure of a SQLite file: which file, what the caller was doing, and why. Its tag
 * and fields are what callers match on (`Effect.catchTag("SqliteError", ...)`): keep them.
 */
import { Schema } from "effect"

export class SqliteError extends Schema.TaggedError<SqliteError>()("SqliteError", {
  filename: Schema.String,
  operation: Schema.String,
  message: Schema.String,
  cause: Schema.Defect()
}) {}
