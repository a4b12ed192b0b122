/**
 * Per tenant and resource, where its sync stands: the cursor of a running full sync (so a
 * crash resumes it), the window a windowed full read is in, the bound of the last incremental
 * window, when it last ran and its last error, and whether the resource is paused. The
 * server implements the port in SQLite; in Kafka mode an adapter shares it between servers.
 */
import { Context, type Effect, Schema } from "effect"

export interface ResourceState {
  readonly appId: string
  readonly businessId: string
  readonly resource: string
  readonly paused: { readonly code: string; readonly message: string; readonly at: number } | null
  /** Cursor text of a running full sync; null when none is running. */
  readonly cursor: string | null
  readonly fullStartedAt: number | null
  readonly fullCompletedAt: number | null
  /**
   * For operations confined to windows (order/list, bill/list): the end (ms) of the window the
   * running full read is in; `cursor` is a cursor within that window. Null otherwise.
   */
  readonly windowEnd: number | null
  /** Upper bound (ms) of the last incremental window that completed. */
  readonly incrementalBound: number | null
  readonly lastRunAt: number | null
  readonly pages: number
  readonly records: number
  readonly lastError: string | null
}

/** A patch sets only the fields it names; the counters add. */
export type StatePatch = Partial<Omit<ResourceState, "appId" | "businessId" | "resource" | "paused" | "pages" | "records">> & {
  readonly addPages?: number
  readonly addRecords?: number
}

export class SyncStateUnavailable extends Schema.TaggedError<SyncStateUnavailable>()("SyncStateUnavailable", {
  message: Schema.String
}) {}

export class SyncStateStore extends Context.Service<SyncStateStore, {
  /** The resource's state (a fresh one when it never ran). */
  readonly state: (appId: string, businessId: string, resource: string) => Effect.Effect<ResourceState, SyncStateUnavailable>
  /** Every resource's state, of one tenant, one application or all. */
  readonly states: (appId?: string, businessId?: string) => Effect.Effect<ReadonlyArray<ResourceState>, SyncStateUnavailable>
  readonly update: (appId: string, businessId: string, resource: string, patch: StatePatch) => Effect.Effect<void, SyncStateUnavailable>
  /** Pauses the resource with the reason a person acts on (null lifts the pause). */
  readonly pause: (appId: string, businessId: string, resource: string, reason: { readonly code: string; readonly message: string } | null) => Effect.Effect<void, SyncStateUnavailable>
}>()("@ocs/sync/SyncStateStore") {}
