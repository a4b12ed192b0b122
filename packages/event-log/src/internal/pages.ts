/**
 * Pages of records read from a log file on the main thread's connection: the one query that
 * `read`, `subscribe` and the Kafka relay page through.
 */
import type Database from "better-sqlite3"
import { Effect } from "effect"
import type { EventLogError } from "../EventLogError.ts"
import type { LogRecord, Offset } from "../LogRecord.ts"
import type { SqliteDatabase } from "@ocs/sqlite"
import { recordColumns, rowToRecord } from "./recordRow.ts"

/** What a page of records is filtered on, besides its first offset. */
export interface PageFilter {
  /** A tenant key, or "all". */
  readonly tenant: string
  readonly types?: ReadonlyArray<string> | undefined
  readonly untilOffset?: number | undefined
  readonly untilReceivedAt?: number | undefined
}

/** Up to `limit` records with offset >= `from` that pass the filter, in offset order. */
export type PageOf = (from: Offset, filter: PageFilter, limit: number) => Effect.Effect<ReadonlyArray<LogRecord>, EventLogError>

export const make = (db: SqliteDatabase.Handle): PageOf => {
  const toRecords = (rows: ReadonlyArray<unknown>) => Effect.forEach(rows, (row) => Effect.fromResult(rowToRecord(row, db.filename)))

  // Every subscriber reads a page after every commit: the page queries are prepared once per
  // shape (which filters are set, how many types) on the read connection, not built and
  // prepared per page by the query builder (measured in the sync server: about 3 µs per
  // webhook went to preparing them).
  const statements = new Map<string, Database.Statement<Array<unknown>, unknown>>()
  return (from, filter, limit) => {
    const params: Array<unknown> = [from]
    let sql = `SELECT ${recordColumns} FROM records WHERE "offset" >= ?`
    if (filter.tenant !== "all") {
      sql += " AND tenant = ?"
      params.push(filter.tenant)
    }
    if (filter.types !== undefined) {
      sql += filter.types.length === 0 ? " AND 0" : ` AND type IN (${filter.types.map(() => "?").join(", ")})`
      params.push(...filter.types)
    }
    if (filter.untilOffset !== undefined) {
      sql += ` AND "offset" <= ?`
      params.push(filter.untilOffset)
    }
    if (filter.untilReceivedAt !== undefined) {
      sql += " AND received_at <= ?"
      params.push(filter.untilReceivedAt)
    }
    sql += ` ORDER BY "offset" LIMIT ?`
    params.push(limit)
    return db.use("read", (_, client) => {
      let statement = statements.get(sql)
      if (statement === undefined) {
        if (statements.size >= 64) statements.clear()
        statement = client.prepare<Array<unknown>, unknown>(sql)
        statements.set(sql, statement)
      }
      return statement.all(...params)
    }).pipe(Effect.flatMap(toRecords))
  }
}
