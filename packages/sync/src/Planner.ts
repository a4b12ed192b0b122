/**
 * What is due, decided without I/O: for one tenant's resource at one instant, whether a pass
 * runs and which (a full read from the first page, the resumption of one a crash cut short,
 * or an incremental read of what changed since the last bound), with its windows; and how
 * long a tenant's loop pauses between passes. `plan` reads the time from the fiber's `Clock`,
 * so `TestClock` moves it in tests; `decide` is the same rule given the instant.
 */
import { Clock, Effect } from "effect"
import { DomainEvent, Operation } from "@ocs/protocol"
import type { ResourceState } from "./SyncState.ts"
import type { SyncTenant } from "./SyncTenants.ts"
import * as Windows from "./Windows.ts"

/** The full pass the pages belong to (when it can find deletions) and whether it is the resource's first. */
export interface PassMeta {
  readonly id: string | undefined
  readonly baseline: boolean
}

export type Plan =
  | { readonly _tag: "Skip" }
  | {
    readonly _tag: "Full"
    /** Resumes a full read a previous run left (its cursor or window is stored). */
    readonly resuming: boolean
    /** When the full read began (a resumed one keeps its start). */
    readonly startedAt: number
    /** The cursor to continue from (a resumed read), as stored. */
    readonly cursor: string | null
    /** Windowed operations: the end of the newest window still to read. */
    readonly windowEnd: number
    /** Windowed operations: windows older than this are not read. */
    readonly horizon: number
    readonly pass: PassMeta
  }
  | {
    readonly _tag: "Incremental"
    /** The filters of each query, oldest first (each within the operation's longest range). */
    readonly ranges: ReadonlyArray<Readonly<Record<string, string | number>>>
    /** The new incremental bound once every range was read. */
    readonly upTo: number
    /** Lists read newest first (`Operation.newestFirst`): read down to this instant (ms), no ranges. */
    readonly since?: number | undefined
  }

export interface PlanInput {
  readonly tenant: Pick<SyncTenant, "status" | "settings">
  readonly operation: Operation.Operation<unknown>
  readonly state: ResourceState
  /** Whether this server may pull the tenant now (several servers, docs/architecture.md §4.19). */
  readonly owned: boolean
  readonly intervalMs: number
  readonly reconcileMs: number
  readonly overlapMs: number
  readonly horizonMs: number
  /** A full read from the first page, whatever cursor is stored. */
  readonly forceFull?: boolean | undefined
  /** An incremental pass is due now (gap fill, docs/architecture.md §4.14). */
  readonly gapFill?: boolean | undefined
}

/** A per-tenant setting in seconds, else the server's value in ms. */
export const secondsOr = (seconds: number | undefined, ms: number): number => seconds === undefined ? ms : seconds * 1000

export const decide = (input: PlanInput, now: number): Plan => {
  const { operation: op, state } = input
  // Paused, on hold, or owned by another server right now.
  if (input.tenant.status !== "active" || state.paused !== null || !input.owned) return { _tag: "Skip" }
  const intervalMs = secondsOr(input.tenant.settings.intervalSeconds, input.intervalMs)
  const reconcileMs = secondsOr(input.tenant.settings.reconcileSeconds, input.reconcileMs)
  const forced = input.forceFull === true
  const resuming = (state.cursor !== null || state.windowEnd !== null) && !forced
  const fullDue = forced || resuming || state.fullCompletedAt === null || now - state.fullCompletedAt >= reconcileMs
  if (fullDue) {
    const startedAt = resuming && state.fullStartedAt !== null ? state.fullStartedAt : now
    // Only a pass that reads everything can tell what is gone: no filters, and a kind whose
    // read model keeps tombstones (docs/architecture.md §4.14).
    const whole = (op.filters === undefined || Object.keys(op.filters).length === 0) && DomainEvent.isDeletableKind(op.entity?.kind)
    return {
      _tag: "Full",
      resuming,
      startedAt,
      cursor: resuming ? state.cursor : null,
      windowEnd: resuming && state.windowEnd !== null ? state.windowEnd : startedAt,
      horizon: startedAt - input.horizonMs,
      pass: { id: whole ? `${Operation.resourceKey(op)}:${startedAt}` : undefined, baseline: state.fullCompletedAt === null }
    }
  }
  // Operations confined to windows without an updated-time filter (bill/list) keep a rolling
  // window instead: the range since the last pass, re-read with overlap.
  const bounds = op.incremental ?? op.window
  if (bounds === undefined && op.newestFirst === undefined) return { _tag: "Skip" }
  const incrementalDue = input.gapFill === true || state.lastRunAt === null || now - state.lastRunAt >= intervalMs
  if (!incrementalDue) return { _tag: "Skip" }
  const from = (state.incrementalBound ?? state.fullStartedAt ?? now) - input.overlapMs
  // No time filter, a sort by change time (the page service): newest first, down to `from`.
  if (bounds === undefined) return { _tag: "Incremental", ranges: [], upTo: now, since: from }
  return {
    _tag: "Incremental",
    ranges: Windows.pieces(from, now, bounds.maxDays, bounds.format).map((range) => Windows.rangeFilters(bounds, range)),
    upTo: now
  }
}

/** `decide` at the fiber's current time. */
export const plan = (input: PlanInput): Effect.Effect<Plan> => Effect.map(Clock.currentTimeMillis, (now) => decide(input, now))

/** The mode a plan's pass reports (and writes in its pages' meta). */
export const modeOf = (plan: Exclude<Plan, { readonly _tag: "Skip" }>): "full" | "resume" | "incremental" =>
  plan._tag === "Incremental" ? "incremental" : plan.resuming ? "resume" : "full"

/** How long a tenant's webhooks may be silent before an incremental pull of every resource. */
export const silenceMillis = (tenant: Pick<SyncTenant, "settings"> | undefined, defaultMs: number): number =>
  secondsOr(tenant?.settings.gapFillSilenceSeconds, defaultMs)

/**
 * The pause of a tenant's loop after its passes: the shortest of its periods, plus up to 10%
 * at random (`random` in [0, 1)). Tenants started together would stay in step for ever
 * otherwise. Never less (unlike Schedule.jittered): a loop that woke before its interval had
 * run would find nothing due and wait a whole interval more.
 */
export const pauseMillis = (
  tenant: Pick<SyncTenant, "settings"> | undefined,
  options: { readonly intervalMs: number; readonly reconcileMs: number; readonly silenceMs: number },
  random: number
): number => {
  const period = Math.min(secondsOr(tenant?.settings.intervalSeconds, options.intervalMs), secondsOr(tenant?.settings.reconcileSeconds, options.reconcileMs), options.silenceMs)
  return period + Math.round(random * period * 0.1)
}
