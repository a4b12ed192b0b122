/**
 * What the projection's entry points take and return (`project`, `run`, `catchUp`, `release`,
 * `rebuild`), shared by the modules that implement them; re-exported by ReadModels.ts.
 */
import type { LogRecord } from "@ocs/event-log"
import type { Effect } from "effect"
import type * as V from "../Views.ts"

export interface RebuildOptions {
  /** The new file; it must not exist (written beside it as `<filename>.rebuilding`, then renamed). */
  readonly filename: string
  /** Only this tenant's records (application-level records of the app are not included). */
  readonly tenant?: V.Tenant | undefined
  /** Point in time: records up to this offset (inclusive). */
  readonly untilOffset?: number | undefined
  /** Point in time: records received at or before this instant (ms epoch). */
  readonly untilReceivedAt?: number | undefined
  readonly consumer?: string | undefined
  /** Records per transaction. Default 5000. */
  readonly batchSize?: number | undefined
  /** Default 262144 (256 MiB). */
  readonly cacheSizeKiB?: number | undefined
}

/**
 * Whether records of this business are applied now. Called once per record whose businessId is
 * not null (application-level records such as webhooksEnabled are always applied), inside the
 * batch's transaction: keep it synchronous and cheap (an in-memory set).
 */
export type Accepts = (appId: string, businessId: string) => boolean

export interface FollowOptions {
  /**
   * Records of businesses it refuses are not applied but quarantined: remembered by offset in
   * the file (`quarantine` lists them) while the checkpoint moves past them, so the projection
   * never stalls; `release` projects them once the business is accepted. Default: accept all.
   */
  readonly accepts?: Accepts | undefined
  /**
   * Whose changes this process relays to the log (docs/architecture.md §4.14). With several
   * servers over one log every projection finds the same changes; only the tenant's owner (the
   * server that pulls it) appends them, the others forget theirs. Default: every tenant.
   */
  readonly relays?: Accepts | undefined
  /**
   * `run` only: told of every batch the subscription delivers (all its records, quarantined
   * ones included) before the batch is projected, so a host can follow the log on the
   * projection's subscription instead of opening another one (over Kafka each subscription is
   * a consumer that fetches and decodes every record; docs/architecture.md §4.19). A batch
   * projected and then delivered again after a restart is told again. A failure stops `run`.
   */
  readonly onBatch?: ((records: ReadonlyArray<LogRecord.LogRecord>) => Effect.Effect<void>) | undefined
}

export interface ProjectOptions extends FollowOptions {
  readonly consumer?: string | undefined
  /** Default: `sqlite:<highest offset in the batch>`. */
  readonly checkpoint?: LogRecord.Checkpoint | undefined
}

export interface ProjectStats {
  /** Records applied (quarantined records and records applied before are not counted). */
  readonly records: number
  /** Changes found by comparing with the copy, waiting in the change outbox for the log. */
  readonly changes?: number | undefined
  /** Records quarantined by the tenant predicate. */
  readonly quarantined: number
  readonly events: number
  /** Offset of the last record projected (undefined when there was none). */
  readonly lastOffset: number | undefined
  readonly millis: number
}

export const addStats = (a: ProjectStats, b: ProjectStats): ProjectStats => ({
  records: a.records + b.records,
  changes: (a.changes ?? 0) + (b.changes ?? 0),
  quarantined: a.quarantined + b.quarantined,
  events: a.events + b.events,
  lastOffset: b.lastOffset ?? a.lastOffset,
  millis: a.millis + b.millis
})

export const emptyStats: ProjectStats = { records: 0, quarantined: 0, events: 0, lastOffset: undefined, millis: 0 }

export const lastOffsetOf = (records: ReadonlyArray<LogRecord.LogRecord>) => {
  let max: number | undefined
  for (const r of records) if (max === undefined || r.offset > max) max = r.offset
  return max
}

export const newestReceivedAt = (records: ReadonlyArray<LogRecord.LogRecord>) => {
  let max: number | undefined
  for (const r of records) if (max === undefined || r.receivedAt > max) max = r.receivedAt
  return max
}

