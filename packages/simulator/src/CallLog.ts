/**
 * Every API call the simulator receives, in arrival order, so a test can assert on what a
 * client really did (e.g. that no call arrived while its key was rate-locked). Bounded: the
 * oldest entries are dropped past `limit`.
 */
import { BoundedLog, type LogQuery, matchesLogQuery } from "./internal/BoundedLog.ts"
import type { Family } from "./Operations.ts"

export interface CallEntry {
  readonly seq: number
  /** Arrival time, unix milliseconds. */
  readonly at: number
  readonly appId: string | null
  readonly businessId: string | null
  readonly family: Family
  /** "product/list", or the raw path when it is not an operation. */
  readonly operation: string
  readonly path: string
  /** "ok", an errorCode (ERR_429, ...), or "fault:<kind>". */
  readonly outcome: string
  readonly status: number
  /** Whether the appId + businessId + URL key was rate-locked when the call arrived. */
  readonly locked: boolean
  readonly durationMs: number
}

export interface CallQuery extends LogQuery {
  readonly sinceMs?: number | undefined
  readonly operation?: string | undefined
}

export class CallLog extends BoundedLog<CallEntry> {
  query(q: CallQuery): ReadonlyArray<CallEntry> {
    return this.select(q, (e) =>
      (q.sinceMs === undefined || e.at >= q.sinceMs) &&
      (q.operation === undefined || e.operation === q.operation) &&
      matchesLogQuery(q, e))
  }
}
