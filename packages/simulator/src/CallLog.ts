/**
 * Every API call the simulator receives, in arrival order, so a test can assert on what a
 * client really did (e.g. that no call arrived while its key was rate-locked). Bounded: the
 * oldest entries are dropped past `limit`.
 */
import { BoundedLog } from "./internal/BoundedLog.ts"
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

export interface CallQuery {
  readonly since?: number | undefined
  readonly sinceMs?: number | undefined
  readonly appId?: string | undefined
  readonly businessId?: string | undefined
  readonly operation?: string | undefined
  readonly outcome?: string | undefined
  readonly limit?: number | undefined
}

export class CallLog extends BoundedLog<CallEntry> {
  query(q: CallQuery): ReadonlyArray<CallEntry> {
    return this.select(q, (e) =>
      (q.sinceMs === undefined || e.at >= q.sinceMs) &&
      (q.appId === undefined || e.appId === q.appId) &&
      (q.businessId === undefined || e.businessId === q.businessId) &&
      (q.operation === undefined || e.operation === q.operation) &&
      (q.outcome === undefined || e.outcome === q.outcome))
  }
}
