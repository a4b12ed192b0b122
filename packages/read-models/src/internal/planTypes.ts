/**
 * The shapes a plan is made of, apart from the code that makes one (plan.ts) and the code that
 * adds rows to it (the projections), so that neither imports the other back.
 */
import type { DomainEvent } from "@ocs/protocol"

/** A log record as the projector needs it (the event log's `LogRecord` fits). */
export interface ProjectableRecord extends DomainEvent.RawRecord {
  readonly offset: number
}

export type Param = string | number | null

/**
 * The rows of a run of records, appended record by record: row `k` runs statement `ops[k]`
 * (its number in the registry's list, ../projections/index.ts)
 * with `params[k]`; record `r` owns rows `ends[r - 1] .. ends[r]` (from 0 for the first) and
 * decoded to `events[r]` domain events. Plain arrays of primitives: cheap to post between threads.
 */
export interface Plan {
  readonly ops: Array<number>
  readonly params: Array<ReadonlyArray<Param>>
  readonly ends: Array<number>
  readonly events: Array<number>
}
