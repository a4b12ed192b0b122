/**
 * The engine's options: the `sync` section of a server's configuration as a schema (seconds,
 * as an operator writes them) with its defaults in one place, and the options the engine
 * runs with (milliseconds, plus the server's hooks), built from it by `fromSection`.
 */
import { type Effect, Schema } from "effect"
import type { Operation } from "@ocs/protocol"
import type { RunReport } from "./PassRunner.ts"

const PositiveNumber = Schema.Finite.check(Schema.isGreaterThan(0))

export const Section = Schema.Struct({
  /**
   * Operations to sync: by key ("pos:/v3.0/bill/list"), by path ("bill/list"), or by the kind
   * of record they fill ("bill"). Any read of the catalogue (docs/api-catalogue.md) that needs
   * no filter can be named; those without a typed read model land in the documents table.
   */
  resources: Schema.Array(Schema.String),
  /** Incremental sync period (operations with updatedAt filters). */
  intervalSeconds: PositiveNumber,
  /** Full reconciliation period (webhooks can be lost or switched off). */
  reconcileSeconds: PositiveNumber,
  /** Incremental windows start this long before the last bound, to cover clock skew. */
  overlapSeconds: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)),
  /**
   * How far back a full read of an operation confined to 31-day windows (orders, bills)
   * goes. Default 365.
   */
  horizonDays: Schema.optional(PositiveNumber),
  pageSize: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 }))),
  /**
   * A tenant whose webhooks were silent this long gets an incremental pull (gap fill,
   * docs/architecture.md §4.14). Default 600.
   */
  gapFillSilenceSeconds: Schema.optional(PositiveNumber),
  /**
   * Tenants whose passes run at once (each still inside its own budget); the others wait for a
   * free slot. Default: no bound (every tenant's loop runs its passes when they are due).
   */
  concurrency: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0)))
})
export type Section = typeof Section.Type

/** The section's defaults (the optional fields' defaults are below). */
export const sectionDefaults = {
  resources: ["product/list", "order/list", "bill/list", "customer/list", "business/depot", "product/inventory", "product/category", "product/brand"],
  intervalSeconds: 60,
  reconcileSeconds: 6 * 3600,
  overlapSeconds: 300
} as const

export const DEFAULT_HORIZON_DAYS = 365
export const DEFAULT_GAP_FILL_SILENCE_SECONDS = 600
export const DEFAULT_SUPERVISE_EVERY_MS = 2000

export interface SyncOptions {
  readonly operations: ReadonlyArray<Operation.Operation<unknown>>
  readonly intervalMs: number
  readonly reconcileMs: number
  readonly overlapMs: number
  /**
   * How far back a full read of a windowed operation goes (order/list, bill/list answer 31
   * days per query, so older records are reached window by window).
   */
  readonly horizonMs: number
  readonly pageSize?: number | undefined
  /** A tenant whose webhooks were silent this long gets an incremental pull of every resource. */
  readonly gapFillSilenceMs?: number | undefined
  /** Tenants whose passes run at once; undefined: no bound. */
  readonly concurrency?: number | undefined
  /** Operations declared in the config, for tenants whose settings name their own resources. */
  readonly declared?: ReadonlyArray<Operation.OperationSpec> | undefined
  /** How often the supervisor looks for added, removed or re-granted tenants. */
  readonly superviseEveryMs?: number | undefined
  /** Runs the supervisor loop (the server restarts it after a failure and shows its health). */
  readonly runLoop?: ((name: string, loop: Effect.Effect<never>) => Effect.Effect<never>) | undefined
  /** Told of every pass that ran (for metrics). */
  readonly onRun?: ((report: RunReport, operation: string, errorTag: string | undefined) => void) | undefined
}

/** The engine's options from the configuration's section (defaults applied here, once). */
export const fromSection = (
  section: Section,
  rest: Pick<SyncOptions, "operations" | "declared" | "runLoop" | "onRun" | "superviseEveryMs">
): SyncOptions => ({
  ...rest,
  intervalMs: section.intervalSeconds * 1000,
  reconcileMs: section.reconcileSeconds * 1000,
  overlapMs: section.overlapSeconds * 1000,
  horizonMs: (section.horizonDays ?? DEFAULT_HORIZON_DAYS) * 24 * 3600 * 1000,
  gapFillSilenceMs: (section.gapFillSilenceSeconds ?? DEFAULT_GAP_FILL_SILENCE_SECONDS) * 1000,
  concurrency: section.concurrency,
  pageSize: section.pageSize
})
