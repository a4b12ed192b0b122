/**
 * The sync engine: per tenant and resource, a full sync the first time, incremental windows
 * where the operation accepts updated-time filters, and a full reconciliation on a schedule
 * (webhooks can be lost or switched off). docs/api-catalogue.md, Limits 5.
 *
 * It composes the parts of this package: the Planner decides what is due, the PassRunner
 * pages it into the event log, the ErrorClassifier says what a failure means (errors that
 * need a person put the tenant or the resource in a visible state instead of retrying for
 * ever), the Supervisor runs the per-tenant loops. State comes through ports the server
 * implements: SyncTenants, SyncStateStore, Notices, Ownership.
 */
import { Context, Effect, Layer, Option, type Scope } from "effect"
import { Ids, Operation } from "@ocs/protocol"
import type { EventLog } from "@ocs/event-log"
import type { CommerceClient } from "@ocs/transport"
import * as ErrorClassifier from "./ErrorClassifier.ts"
import { Notices } from "./Notices.ts"
import * as Operations from "./Operations.ts"
import { Ownership } from "./Ownership.ts"
import * as PageService from "./PageService.ts"
import * as PassRunner from "./PassRunner.ts"
import * as Planner from "./Planner.ts"
import * as Scopes from "./Scopes.ts"
import * as Supervisor from "./Supervisor.ts"
import * as SyncOptions from "./SyncOptions.ts"
import { SyncStateStore } from "./SyncState.ts"
import { type SyncTenant, SyncTenants } from "./SyncTenants.ts"

export type { RunReport } from "./PassRunner.ts"

export interface PassOptions {
  /** A full read from the first page, whatever cursor is stored. */
  readonly forceFull?: boolean | undefined
  /** Incremental passes are due now (gap fill, docs/architecture.md §4.14). */
  readonly gapFill?: boolean | undefined
}

export class SyncEngine extends Context.Service<SyncEngine, {
  /** Runs one pass for a tenant's resource now (what the loop does when it is due). */
  readonly runOnce: (tenant: SyncTenant, operation: Operation.Operation<unknown>, options?: PassOptions) => Effect.Effect<PassRunner.RunReport>
  /** Syncs every resource of a tenant now, in sequence. */
  readonly syncTenant: (appId: string, businessId: string, options?: PassOptions) => Effect.Effect<ReadonlyArray<PassRunner.RunReport>>
  /**
   * Gap fill: every tenant of the application (or the one named) owes an incremental pull of
   * each resource, run as soon as its loop is free (docs/architecture.md §4.14).
   */
  readonly gapFill: (target: { readonly appId: string; readonly businessId?: string | undefined }, reason: string) => Effect.Effect<void>
  /** The operations a tenant syncs (its settings' resources and depots, else the server's). */
  readonly operationsOf: (tenant: SyncTenant) => Effect.Effect<ReadonlyArray<Operation.Operation<unknown>>, Operations.UnknownResource>
  /** The tenant's resources its grant leaves out (not pulled), each with its fix (./Scopes.ts). */
  readonly notGrantedOf: (tenant: SyncTenant) => Effect.Effect<ReadonlyArray<Scopes.NotGranted>, Operations.UnknownResource>
  /** Starts the per-tenant loops and keeps them in step with the registry (scoped). */
  readonly start: Effect.Effect<void, never, Scope.Scope>
  readonly operations: ReadonlyArray<Operation.Operation<unknown>>
}>()("@ocs/sync/SyncEngine") {
  static readonly layer = (
    options: SyncOptions.SyncOptions
  ): Layer.Layer<SyncEngine, never, CommerceClient.CommerceClient | EventLog.EventLog | SyncTenants | SyncStateStore | Notices | Ownership> =>
    Layer.effect(SyncEngine, make(options))
}

const errorMessage = (e: unknown) => (e instanceof Error ? e.message : String(e))
const skipped: PassRunner.RunReport = { mode: "skipped", pages: 0, records: 0, outcome: "done" }

export const make = Effect.fnUntraced(function*(options: SyncOptions.SyncOptions) {
  const tenants = yield* SyncTenants
  const store = yield* SyncStateStore
  const notices = yield* Notices
  const ownership = yield* Ownership
  const runner = yield* PassRunner.make({ pageSize: options.pageSize, horizonMs: options.horizonMs })

  /** Records the failure, then does what it calls for; the outcome of the pass. */
  const onError = (t: SyncTenant, op: Operation.Operation<unknown>, error: ErrorClassifier.Failure) =>
    Effect.gen(function*() {
      const resource = Operation.resourceKey(op)
      const message = error.message ?? error._tag
      yield* notices.recordError({ appId: t.appId, businessId: t.businessId, resource, tag: error._tag, message }).pipe(Effect.ignore)
      yield* store.update(t.appId, t.businessId, resource, { lastError: `${error._tag}: ${message}` }).pipe(Effect.ignore)
      const action = ErrorClassifier.classify(error)
      switch (action._tag) {
        case "RestartFullSync":
          yield* store.update(t.appId, t.businessId, resource, { cursor: null }).pipe(Effect.ignore)
          yield* Effect.logWarning(`sync ${Ids.tenantKey(t)} ${resource}: cursor refused, the full sync restarts from the first page`)
          return "error" as const
        case "HoldTenant":
          yield* tenants.hold(t.appId, t.businessId, { code: action.code, message: action.message }).pipe(Effect.ignore)
          yield* Effect.logWarning(`tenant ${Ids.tenantKey(t)} needs attention: ${action.message}`)
          return "attention" as const
        case "PauseResource":
          yield* store.pause(t.appId, t.businessId, resource, { code: action.code, message: action.message }).pipe(Effect.ignore)
          yield* Effect.logWarning(`tenant ${Ids.tenantKey(t)} resource ${resource} paused: ${action.message}`)
          return "paused" as const
        case "Retry":
          yield* Effect.logWarning(`sync ${Ids.tenantKey(t)} ${Operation.key(op)} failed: ${action.message}`)
          return "error" as const
      }
    })

  const runOnce = (t: SyncTenant, op: Operation.Operation<unknown>, passOptions?: PassOptions) =>
    Effect.gen(function*() {
      const key = Operation.resourceKey(op)
      const state = yield* store.state(t.appId, t.businessId, key)
      const plan = yield* Planner.plan({
        tenant: t,
        operation: op,
        state,
        owned: ownership.owns(t.appId, t.businessId),
        intervalMs: options.intervalMs,
        reconcileMs: options.reconcileMs,
        overlapMs: options.overlapMs,
        horizonMs: options.horizonMs,
        forceFull: passOptions?.forceFull,
        gapFill: passOptions?.gapFill
      })
      if (plan._tag === "Skip") return skipped
      const mode = Planner.modeOf(plan)
      const progress: PassRunner.Progress = { pages: 0, records: 0 }
      return yield* runner.run(t, op, plan, state, progress).pipe(
        // Built after the run: the counters are read when it ends.
        Effect.map((): PassRunner.RunReport => ({ mode, pages: progress.pages, records: progress.records, outcome: "done" })),
        Effect.tap((report) => Effect.sync(() => options.onRun?.(report, key, undefined))),
        Effect.tap((report) => Effect.logDebug(`sync pass ${report.mode}: ${report.pages} pages, ${report.records} records`)),
        Effect.catch((error) =>
          Effect.map(onError(t, op, error as ErrorClassifier.Failure), (outcome): PassRunner.RunReport => {
            const report: PassRunner.RunReport = { mode, pages: progress.pages, records: progress.records, outcome, error: errorMessage(error) }
            options.onRun?.(report, key, (error as { _tag?: string })._tag ?? "Unknown")
            return report
          })
        )
      )
    }).pipe(
      Effect.catch((e) => Effect.succeed<PassRunner.RunReport>({ mode: "skipped", pages: 0, records: 0, outcome: "error", error: errorMessage(e) })),
      // Log lines of the pass name its tenant and resource (docs/operations.md, Logs).
      Effect.annotateLogs({ tenant: Ids.tenantKey(t), resource: Operation.resourceKey(op) }),
      // A pass starts its own trace (the loop that runs it lives for ever).
      Effect.withSpan("SyncEngine.runOnce", { root: true, attributes: { tenant: Ids.tenantKey(t), operation: Operation.resourceKey(op) } })
    )

  const tenantOperations = Operations.forTenants(options.operations, options.declared ?? [])
  // The tenant's resources (its settings), within what its grant allows (./Scopes.ts).
  // The page service's reads follow the tenant's pages (./PageService.ts), granted by `pageIds`.
  const operationsOf = (t: SyncTenant) => Effect.map(tenantOperations(t.settings), (ops) => [...Scopes.apply(ops, t).operations, ...PageService.readsOf(t)])
  const notGrantedOf = (t: SyncTenant) => Effect.map(tenantOperations(t.settings), (ops) => Scopes.apply(ops, t).notGranted)

  const syncTenant = (appId: string, businessId: string, passOptions?: PassOptions) =>
    Effect.gen(function*() {
      const t = yield* tenants.tenant(appId, businessId).pipe(Effect.orElseSucceed(() => Option.none<SyncTenant>()))
      if (Option.isNone(t)) return []
      const reports: Array<PassRunner.RunReport> = []
      const operations = yield* operationsOf(t.value).pipe(
        Effect.catch((e) =>
          Effect.as(
            Effect.logWarning(`tenant ${Ids.tenantKey({ appId, businessId })}: ${e.message}; syncing the server's resources`),
            [...Scopes.apply(options.operations, t.value).operations, ...PageService.readsOf(t.value)]
          )
        )
      )
      for (const op of operations) {
        // Re-read the tenant: a previous resource may have put it on hold.
        const fresh = yield* tenants.tenant(appId, businessId).pipe(Effect.orElseSucceed(() => t))
        reports.push(yield* runOnce(Option.getOrElse(fresh, () => t.value), op, passOptions))
      }
      return reports
    })

  const supervisor = yield* Supervisor.make({
    intervalMs: options.intervalMs,
    reconcileMs: options.reconcileMs,
    gapFillSilenceMs: options.gapFillSilenceMs ?? SyncOptions.DEFAULT_GAP_FILL_SILENCE_SECONDS * 1000,
    concurrency: options.concurrency,
    superviseEveryMs: options.superviseEveryMs ?? SyncOptions.DEFAULT_SUPERVISE_EVERY_MS,
    runLoop: options.runLoop
  }, syncTenant)

  return SyncEngine.of({ runOnce, syncTenant, gapFill: supervisor.gapFill, operationsOf, notGrantedOf, start: supervisor.start, operations: options.operations })
})
