/**
 * Every webhook delivery attempt (and every delivery dropped or cancelled before one), in
 * order, so a test can assert on what the sender really did. Bounded like the call log.
 */
import { BoundedLog, type LogQuery, matchesLogQuery } from "./internal/BoundedLog.ts"

export type DeliveryOutcome = "ok" | "status" | "redirect" | "timeout" | "error" | "dropped" | "cancelled"

export interface DeliveryEntry {
  readonly seq: number
  readonly at: number
  readonly deliveryId: number
  readonly appId: string
  readonly businessId: string | null
  readonly event: string
  /** 1 for the first try, up to 1 + maxRetries; 0 for a delivery dropped before sending. */
  readonly attempt: number
  readonly outcome: DeliveryOutcome
  readonly status: number | null
  readonly error: string | null
  readonly durationMs: number
  /** The exact body sent. */
  readonly body: string
}

export interface DeliveryQuery extends LogQuery {
  readonly event?: string | undefined
}

export class DeliveryLog extends BoundedLog<DeliveryEntry> {
  query(q: DeliveryQuery): ReadonlyArray<DeliveryEntry> {
    return this.select(q, (e) =>
      (q.event === undefined || e.event === q.event) &&
      matchesLogQuery(q, e))
  }
}
