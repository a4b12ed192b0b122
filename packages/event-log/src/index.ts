export * as Checkpoints from "./Checkpoints.ts"
export * as EventLog from "./EventLog.ts"
export * as EventLogError from "./EventLogError.ts"
export * as KafkaEventLog from "./KafkaEventLog.ts"
export * as LogRecord from "./LogRecord.ts"
/**
 * Moved to `@ocs/sqlite`; kept here as a re-export so existing imports keep working.
 * @deprecated import `SqliteDatabase` from `@ocs/sqlite`.
 */
export { SqliteDatabase } from "@ocs/sqlite"
export * as SqliteEventLog from "./SqliteEventLog.ts"
export * as Tables from "./Tables.ts"
