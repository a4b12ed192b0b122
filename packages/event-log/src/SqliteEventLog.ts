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
 *
 * `layer(options)` provides `EventLog` and `DirectAppend` (appends from plain callbacks).
 */
import { Context, Effect, Layer, type Scope } from "effect"
import { DirectAppend } from "./DirectAppend.ts"
import { EventLog, type EventLogService } from "./EventLog.ts"
import type { SqliteError } from "./EventLogError.ts"
import * as Core from "./internal/sqliteLog.ts"

export type Options = Core.Options

/** The drizzle-kit migrations folder of event-log files (run at open). */
export const migrationsFolder = Core.migrationsFolder

/** The log as a service value, in the current scope (tests, tools that open several logs). */
export const make = (options: Options): Effect.Effect<EventLogService, SqliteError, Scope.Scope> =>
  Core.make(options).pipe(Effect.map((core) => core.service))

/** The log on one SQLite file: `EventLog`, and `DirectAppend` over the same group commit. */
export const layer = (options: Options): Layer.Layer<EventLog | DirectAppend, SqliteError> =>
  Layer.effectContext(Effect.map(Core.make(options), (core) =>
    Context.make(EventLog, core.service).pipe(Context.add(DirectAppend, core.direct))))

/**
 * Decodes a row of the `records` table into a LogRecord, for tools that query a log file
 * directly (the replay tool): select `recordColumns`, which names each column as the field
 * this decoder reads.
 */
export { recordColumns, rowToRecord } from "./internal/recordRow.ts"
