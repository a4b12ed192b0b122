/**
 * SqliteEventLog: the default event log, one SQLite file in WAL mode.
 *
 * - Durability: `append` resolves after the transaction holding its records committed with
 *   `synchronous=FULL` (the WAL is fsynced): an acknowledged record survives a crash or power
 *   loss.
 * - Group commit: appends that arrive while a commit runs (or within `commitWindowMillis`) are
 *   written in one transaction; each caller resolves after that commit. Table `commits` keeps
 *   one row per transaction.
 * - Ordering: offsets strictly increase in commit order, never reused; a call's records are
 *   contiguous. Two appends from one fiber keep their order; so does every tenant's sequence.
 * - Dedupe: a record whose dedupeKey exists for the same tenant within `dedupeWindowMillis`
 *   (or whose explicit id exists) is not appended; it returns `Duplicate` with the original
 *   offset, and the decision is kept in `dedupe_decisions`.
 */
import { Effect, type Scope } from "effect"
import type { EventLogService } from "./EventLog.ts"
import type { SqliteError } from "./EventLogError.ts"
import * as Core from "./internal/sqliteLog.ts"

export type Options = Core.Options

/** The drizzle-kit migrations folder of event-log files (run at open). */
export const migrationsFolder = Core.migrationsFolder

export const make = (options: Options): Effect.Effect<EventLogService, SqliteError, Scope.Scope> =>
  Core.make(options).pipe(Effect.map((core) => core.service))

/**
 * Decodes a row of the `records` table (columns as in `Tables.records`, aliased to the record's
 * field names) into a LogRecord; for tools that query a log file directly (the replay tool).
 */
export { rowToRecord } from "./internal/sqliteLog.ts"
