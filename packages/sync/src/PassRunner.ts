/**
 * Runs one planned pass: pages through the transport into the event log, each page appended as
 * received before its cursor is saved, so a crash resumes from the saved cursor with no page
 * skipped (a page fetched twice is the same fact, and the log's dedupe key drops it).
 * Windowed full reads walk newest window first back to the horizon, saving the window they
 * are in. docs/api-catalogue.md, Limits 5: keep a copy, fetch only what changed.
 */
import { Clock, Effect, Option, Stream } from "effect"
import { Operation, Paginator, Records } from "@ocs/protocol"
import { EventLog } from "@ocs/event-log"
import { CommerceClient } from "@ocs/transport"
import type { Failure } from "./ErrorClassifier.ts"
import * as PageRecords from "./internal/pageRecords.ts"
import type { PassMeta, Plan } from "./Planner.ts"
import { type ResourceState, SyncStateStore } from "./SyncState.ts"
import type { SyncTenant } from "./SyncTenants.ts"
import * as Windows from "./Windows.ts"

export interface RunReport {
  readonly mode: "full" | "resume" | "incremental" | "skipped"
  readonly pages: number
  readonly records: number
  readonly outcome: "done" | "attention" | "paused" | "error"
  readonly error?: string | undefined
}

/** What a pass read so far (kept when it fails half-way, for its report). */
export interface Progress {
  pages: number
  records: number
}

export interface PassRunnerOptions {
  readonly pageSize?: number | undefined
  readonly horizonMs: number
}

/** One query read to its last page. */
interface Query {
  /** The query's extra filters (a window or an incremental range). */
  readonly range: Readonly<Record<string, unknown>> | undefined
  readonly cursor: Paginator.Cursor | undefined
  /** Keep each page's next cursor once the page is durable (full reads: a crash resumes there). */
  readonly saveCursor: boolean
  /**
   * Full reads: the pass the cursor belongs to, saved with it. With shared sync state another
   * server's state may have replaced this one's while it read (docs/architecture.md §4.19): a
   * cursor must never reach a new owner with the start (the pass id) or the window of another
   * pass, whose pages before that cursor the log may not hold.
   */
  readonly passState?: { readonly fullStartedAt: number; readonly windowEnd: number | null } | undefined
  /** The range is part of the pages' identity (windows of a full read). */
  readonly keyedByRange: boolean
  readonly pass: PassMeta | undefined
  /** Newest-first reads (`Operation.newestFirst`): stop past this instant (ms). */
  readonly since?: number | undefined
  /** A record's own list (`Operation.each`): no state of its own. */
  readonly child?: boolean | undefined
}

/** The change time (ms) a newest-first list writes in its record, if any. */
const changedAt = (record: unknown, newest: Operation.NewestFirst): number | undefined => {
  const v = Records.toNumber(Records.valueAt(record, newest.field))
  return v === undefined ? undefined : newest.unit === "s" ? v * 1000 : v
}

/** Runs a planned pass; it fails with what the transport, the log or the state store failed with. */
export interface Runner {
  readonly run: (
    t: SyncTenant,
    op: Operation.Operation<unknown>,
    plan: Exclude<Plan, { readonly _tag: "Skip" }>,
    state: ResourceState,
    progress: Progress
  ) => Effect.Effect<void, Failure>
}

export const make = Effect.fnUntraced(function*(options: PassRunnerOptions) {
  const client = yield* CommerceClient.CommerceClient
  const log = yield* EventLog.EventLog
  const store = yield* SyncStateStore

  const access = (t: SyncTenant): CommerceClient.TenantAccess => ({
    appId: t.appId as CommerceClient.TenantAccess["appId"],
    businessId: t.businessId as CommerceClient.TenantAccess["businessId"],
    accessToken: t.accessToken
  })

  const appendPage = (t: SyncTenant, op: Operation.Operation<unknown>, page: CommerceClient.RawPage, mode: string, query: Query) =>
    Effect.useSpan("SyncEngine.appendPage", { attributes: { "ocs.resource": Operation.resourceKey(op), "ocs.records": page.records.length } }, (span) =>
      log.append([PageRecords.page(t, op, page, { mode, range: query.keyedByRange ? query.range : undefined, pass: query.pass, span })])).pipe(
        Effect.flatMap(([result]) =>
          result?._tag === "Duplicate" && query.pass?.id !== undefined
            ? log.append([PageRecords.passSeen(t, op, page, query.pass.id, result.id)])
            : Effect.void
        )
      )

  const readAll = (t: SyncTenant, op: Operation.Operation<unknown>, mode: string, query: Query, progress: Progress): Effect.Effect<void, Failure> => {
    const key = Operation.resourceKey(op)
    const newest = query.since === undefined ? undefined : op.newestFirst
    // Compared in the field's unit: a change in the bound's own second is still found.
    const since = newest === undefined ? 0 : newest.unit === "s" ? Math.floor((query.since ?? 0) / 1000) * 1000 : query.since ?? 0
    // Newest first (no time filter to send): the read stops after the page that reaches past its bound.
    const changed = (record: unknown): boolean => newest === undefined || (changedAt(record, newest) ?? Number.POSITIVE_INFINITY) >= since
    return client.pages(access(t), op, {
      size: options.pageSize,
      cursor: query.cursor,
      filters: query.range === undefined ? op.filters : { ...op.filters, ...query.range },
      ...(newest === undefined ? {} : { sort: { [newest.sort]: "DESC" } })
    }).pipe(
      newest === undefined ? (s) => s : Stream.takeUntil((page) => !page.records.every(changed)),
      Stream.runForEach((page) =>
        Effect.gen(function*() {
          yield* appendPage(t, op, page, mode, query)
          progress.pages++
          progress.records += page.records.length
          // Each record's own list (a conversation's messages), the changed ones only when incremental.
          const each = op.each
          for (const record of each === undefined ? [] : page.records) {
            const id = changed(record) ? Records.recordId(record, each!.idField) : undefined
            if (id === undefined) continue
            yield* readAll(t, each!.of(id), mode, { range: undefined, cursor: undefined, saveCursor: false, keyedByRange: false, pass: undefined, since: query.since, child: true }, progress)
          }
          if (query.child === true) return
          // Saved after the page (and its records' own lists) is durable: a crash resumes right
          // here; one before reads the page again, the same facts, deduplicated by the log.
          yield* store.update(t.appId, t.businessId, key, {
            ...(query.saveCursor ? { cursor: Option.match(page.next, { onNone: () => null, onSome: (c) => c.text }) } : {}),
            ...query.passState,
            addPages: 1,
            addRecords: page.records.length
          })
        })
      )
    )
  }

  const full = (t: SyncTenant, op: Operation.Operation<unknown>, plan: Extract<Plan, { readonly _tag: "Full" }>, state: ResourceState, progress: Progress) =>
    Effect.gen(function*() {
      const key = Operation.resourceKey(op)
      const mode = plan.resuming ? "resume" : "full"
      if (!plan.resuming) yield* store.update(t.appId, t.businessId, key, { fullStartedAt: plan.startedAt, windowEnd: null, cursor: null })
      const stored = plan.cursor === null ? undefined : Paginator.cursorFromText(plan.cursor)
      let cursor = stored !== undefined && stored._tag === "Success" ? stored.success : undefined
      const window = op.window
      if (window === undefined) {
        yield* readAll(t, op, mode, { range: undefined, cursor, saveCursor: true, passState: { fullStartedAt: plan.startedAt, windowEnd: null }, keyedByRange: false, pass: plan.pass }, progress)
      } else {
        // Newest window first, back to the horizon; the window and the cursor in it are saved,
        // so a crash resumes inside the window it was reading.
        let end = plan.windowEnd
        for (let range = Windows.fullWindow(window, end, plan.horizon); range !== undefined; range = Windows.fullWindow(window, end, plan.horizon)) {
          if (end !== state.windowEnd) yield* store.update(t.appId, t.businessId, key, { fullStartedAt: plan.startedAt, windowEnd: end })
          yield* readAll(t, op, mode, {
            range: Windows.rangeFilters(window, range),
            cursor,
            saveCursor: true,
            passState: { fullStartedAt: plan.startedAt, windowEnd: end },
            keyedByRange: true,
            pass: plan.pass
          }, progress)
          cursor = undefined
          end = Windows.nextWindowEnd(range)
          yield* store.update(t.appId, t.businessId, key, { fullStartedAt: plan.startedAt, windowEnd: end, cursor: null })
        }
      }
      const kind = op.entity?.kind
      if (plan.pass.id !== undefined && kind !== undefined) {
        // Appended before the state says "done": a crash in between repeats the pass, and the
        // completion's dedupe key keeps it once. Windowed reads reached back to the horizon
        // only (a day of margin: windows are cut on the service's calendar days).
        const createdFrom = window === undefined ? undefined : plan.startedAt - options.horizonMs + 24 * 3600 * 1000
        yield* log.append([PageRecords.passDone(t, { id: plan.pass.id, kind, startedAt: plan.startedAt, createdFrom }, { resource: key, pages: progress.pages, records: progress.records })])
      }
      // Changes made while the full sync ran are caught by the next incremental window.
      const done = yield* Clock.currentTimeMillis
      yield* store.update(t.appId, t.businessId, key, { cursor: null, windowEnd: null, fullCompletedAt: done, incrementalBound: plan.startedAt, lastRunAt: done, lastError: null })
    })

  const incremental = (t: SyncTenant, op: Operation.Operation<unknown>, plan: Extract<Plan, { readonly _tag: "Incremental" }>, progress: Progress) =>
    Effect.gen(function*() {
      for (const range of plan.ranges) {
        yield* readAll(t, op, "incremental", { range, cursor: undefined, saveCursor: false, keyedByRange: false, pass: undefined }, progress)
      }
      if (plan.since !== undefined) {
        yield* readAll(t, op, "incremental", { range: undefined, cursor: undefined, saveCursor: false, keyedByRange: false, pass: undefined, since: plan.since }, progress)
      }
      yield* store.update(t.appId, t.businessId, Operation.resourceKey(op), { incrementalBound: plan.upTo, lastRunAt: plan.upTo, lastError: null })
    })

  /** Runs the plan; `progress` counts what was read, also when it fails. */
  const run = (t: SyncTenant, op: Operation.Operation<unknown>, plan: Exclude<Plan, { readonly _tag: "Skip" }>, state: ResourceState, progress: Progress) =>
    plan._tag === "Full" ? full(t, op, plan, state, progress) : incremental(t, op, plan, progress)

  const runner: Runner = { run }
  return runner
})
