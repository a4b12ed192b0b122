/**
 * Pulls: per tenant and resource, a full sync the first time, incremental windows where the
 * operation accepts updatedAt filters, and a full reconciliation on a schedule (webhooks can
 * be lost or switched off). docs/api-catalogue.md, Limits 5: keep a copy, update it from webhooks, and
 * fetch only changed records.
 *
 * Every page goes to the event log exactly as received (source "sync") before its cursor is
 * saved, so a crash resumes from the saved cursor: no page skipped; a page fetched twice is
 * the same fact and the log's dedupe key drops it. Errors that need a person put the tenant
 * (or the resource) in a visible state instead of retrying forever.
 */
import { Clock, Context, Deferred, Duration, Effect, FiberMap, Layer, Option, Random, Schedule, Schema, Stream, type Tracer } from "effect"
import * as Crypto from "node:crypto"
import { Catalogue, DomainEvent, Operation, Paginator, Records } from "@ocs/protocol"
import { EventLog, type EventLogError, TraceContext } from "@ocs/event-log"
import { CommerceClient } from "@ocs/transport"
import { Ownership } from "./cluster/Ownership.ts"
import * as SyncWindows from "./SyncWindows.ts"
import { type Business, TenantStore } from "./tenants/TenantStore.ts"
import type { TenantSettings } from "./tenants/TenantSettings.ts"

export interface SyncOptions {
  readonly operations: ReadonlyArray<Operation.Operation<unknown>>
  readonly intervalMs: number
  readonly reconcileMs: number
  readonly overlapMs: number
  /**
   * How far back a full read of a windowed operation goes (order/list, bill/list answer 31
   * days per query, so older records are reached window by window). Default 365 days.
   */
  readonly horizonMs: number
  readonly pageSize?: number | undefined
  /**
   * A tenant whose webhooks were silent this long gets an incremental pull of every resource
   * (gap fill, docs/architecture.md §4.14); a tenant's settings may say otherwise. Default 10 min.
   */
  readonly gapFillSilenceMs?: number | undefined
  /** Operations declared in the config, for tenants whose settings name their own resources. */
  readonly declared?: ReadonlyArray<Operation.OperationSpec> | undefined
  /** How often the supervisor looks for added, removed or re-granted tenants. */
  readonly superviseEveryMs?: number | undefined
  /**
   * Runs the supervisor loop (the server restarts it after a failure and shows its health);
   * default: as it is.
   */
  readonly runLoop?: ((name: string, loop: Effect.Effect<never>) => Effect.Effect<never>) | undefined
  /** Told of every pass that ran (for metrics). */
  readonly onRun?: ((report: RunReport, operation: string, errorTag: string | undefined) => void) | undefined
}

export interface RunReport {
  readonly mode: "full" | "resume" | "incremental" | "skipped"
  readonly pages: number
  readonly records: number
  readonly outcome: "done" | "attention" | "paused" | "error"
  readonly error?: string | undefined
}

/** What a person must act on stops the tenant; what concerns one resource pauses it. */
const tenantAttention = new Set(["InvalidAccessToken", "InvalidVersion", "BusinessNotEnableApi", "InvalidBusinessId", "InvalidAppId"])
const resourcePause = new Set(["Forbidden", "InvalidDepotId"])

export class SyncEngine extends Context.Service<SyncEngine, {
  /** Runs one pass for a tenant's resource now (what the scheduler does when it is due). */
  readonly runOnce: (business: Business, operation: Operation.Operation<unknown>, options?: { readonly forceFull?: boolean; readonly gapFill?: boolean }) => Effect.Effect<RunReport>
  /** Syncs every resource of a tenant now, in sequence (`gapFill`: incremental passes are due now). */
  readonly syncTenant: (appId: string, businessId: string, options?: { readonly forceFull?: boolean; readonly gapFill?: boolean }) => Effect.Effect<ReadonlyArray<RunReport>>
  /**
   * Gap fill: every tenant of the application (or the one named) owes an incremental pull of
   * each resource, run as soon as its loop is free (docs/architecture.md §4.14).
   */
  readonly gapFill: (target: { readonly appId: string; readonly businessId?: string | undefined }, reason: string) => Effect.Effect<void>
  /** The operations a tenant syncs (its settings' resources and depots, else the server's). */
  readonly operationsOf: (business: Business) => Effect.Effect<ReadonlyArray<Operation.Operation<unknown>>, UnknownResource>
  /** Starts the per-tenant loops and keeps them in step with the tenant store (scoped). */
  readonly start: Effect.Effect<void, never, import("effect").Scope.Scope>
  readonly operations: ReadonlyArray<Operation.Operation<unknown>>
}>()("@ocs/sync-server/SyncEngine") {
  static readonly layer = (options: SyncOptions): Layer.Layer<SyncEngine, never, CommerceClient.CommerceClient | EventLog.EventLog | TenantStore | Ownership> =>
    Layer.effect(SyncEngine, make(options))
}

/** What the pages of a full pass carry: the pass (when it can find deletions) and whether it is the first. */
interface PassMeta {
  readonly id: string | undefined
  readonly baseline: boolean
}

/** A per-tenant setting in seconds, else the server's value in ms. */
const secondsOr = (seconds: number | undefined, ms: number): number => seconds === undefined ? ms : seconds * 1000

const sha = (text: string) => Crypto.createHash("sha256").update(text).digest("hex")

const errorTag = (e: { readonly _tag: string }) => e._tag
const errorMessage = (e: unknown) => (e instanceof Error ? e.message : String(e))

export const make = Effect.fnUntraced(function*(options: SyncOptions) {
  const client = yield* CommerceClient.CommerceClient
  const log = yield* EventLog.EventLog
  const store = yield* TenantStore
  const ownership = yield* Ownership

  const access = (b: Business): CommerceClient.TenantAccess => ({
    appId: b.appId as CommerceClient.TenantAccess["appId"],
    businessId: b.businessId as CommerceClient.TenantAccess["businessId"],
    accessToken: b.accessToken
  })

  /** Appends one page as received; its cursor is saved only after this resolves. */
  /**
   * `range`: the window filters of a windowed full read. Two windows' first pages share a
   * cursor (none) and may share a text (an empty page), yet are different facts: the range is
   * part of their dedupe key and kept in meta.
   */
  // The append's span is carried in the record (docs/architecture.md §4.17): the projection
  // links to it.
  const appendPage = (b: Business, op: Operation.Operation<unknown>, page: CommerceClient.RawPage, mode: string, range: Readonly<Record<string, unknown>> | undefined, pass: PassMeta | undefined): Effect.Effect<unknown, EventLogError.EventLogError> =>
    Effect.flatMap(Effect.useSpan("SyncEngine.appendPage", { attributes: { "ocs.resource": Operation.resourceKey(op), "ocs.records": page.records.length } }, (span) => appendRaw(b, op, page, mode, range, pass, span)), ([result]) =>
      // The log already held this page (same cursor, same content): the pass still saw its
      // records, so a small record says which (docs/architecture.md §4.14).
      result?._tag === "Duplicate" && pass?.id !== undefined
        ? log.append([{
          appId: b.appId,
          businessId: b.businessId,
          source: "sync",
          type: DomainEvent.PASS_SEEN_TYPE,
          body: JSON.stringify({ pass: pass.id, ids: idsOf(op, page) }),
          dedupeKey: `pass-seen:${pass.id}:${result.id}`
        }]).pipe(Effect.asVoid)
        : Effect.void)

  const idsOf = (op: Operation.Operation<unknown>, page: CommerceClient.RawPage): Array<string> => {
    const field = op.entity?.idField ?? "id"
    const out: Array<string> = []
    for (const r of page.records) {
      const id = Records.recordId(r, field) ?? (op.entity?.kind === "order" ? Records.recordId(r, "id") : undefined)
      if (id !== undefined) out.push(id)
    }
    return out
  }

  const appendRaw = (b: Business, op: Operation.Operation<unknown>, page: CommerceClient.RawPage, mode: string, range: Readonly<Record<string, unknown>> | undefined, pass: PassMeta | undefined, span: Tracer.Span) =>
    log.append([{
      appId: b.appId,
      businessId: b.businessId,
      source: "sync",
      type: Operation.key(op),
      body: page.text,
      // The same page (same cursor in, same content) is the same fact.
      dedupeKey: `sync:${b.appId}:${b.businessId}:${Operation.resourceKey(op)}:${range === undefined ? "" : `${sha(JSON.stringify(range))}:`}${sha(Option.match(page.cursor, { onNone: () => "", onSome: (c) => c.text }))}:${sha(page.text)}`,
      meta: {
        ...(span.sampled ? { [TraceContext.metaKey]: TraceContext.traceparent(span) } : {}),
        ...DomainEvent.syncMeta(op.entity ?? { kind: op.resource, idField: "id" }),
        mode,
        ...(range === undefined ? {} : { range }),
        // The full pass the page belongs to (its ids count towards tombstones) and whether it
        // is the resource's first (it reveals no change): docs/architecture.md §4.14.
        ...(pass?.id === undefined ? {} : { pass: pass.id }),
        ...(pass?.baseline === true ? { baseline: true } : {}),
        cursor: Option.match(page.cursor, { onNone: () => null, onSome: (c) => c.text }),
        next: Option.match(page.next, { onNone: () => null, onSome: (c) => c.text }),
        records: page.records.length,
        warnings: page.warnings.map((w) => w.text)
      }
    }])

  const onError = (b: Business, op: Operation.Operation<unknown>, error: { readonly _tag: string; readonly message?: string }) =>
    Effect.gen(function*() {
      const tag = errorTag(error)
      const message = error.message ?? tag
      const resource = Operation.resourceKey(op)
      yield* store.recordError({ appId: b.appId, businessId: b.businessId, resource, tag, message }).pipe(Effect.ignore)
      yield* store.updateState(b.appId, b.businessId, resource, { lastError: `${tag}: ${message}` }).pipe(Effect.ignore)
      const code = "errorCode" in error ? String((error as { errorCode: unknown }).errorCode) : tag
      if (tag === "InvalidFormFields" && Object.keys((error as { fields?: object }).fields ?? {}).some((f) => f.startsWith("paginator.next"))) {
        // The service refused a cursor it issued (expired, or damaged on its side): resuming
        // from it can never succeed, so the next pass starts this full sync from page 1.
        yield* store.updateState(b.appId, b.businessId, resource, { cursor: null }).pipe(Effect.ignore)
        yield* Effect.logWarning(`sync ${b.appId}:${b.businessId} ${resource}: cursor refused, the full sync restarts from the first page`)
        return "error" as const
      }
      if (tenantAttention.has(tag)) {
        yield* store.setStatus(b.appId, b.businessId, "attention", { code, message }).pipe(Effect.ignore)
        yield* Effect.logWarning(`tenant ${b.appId}:${b.businessId} needs attention: ${message}`)
        return "attention" as const
      }
      if (resourcePause.has(tag)) {
        yield* store.pauseResource(b.appId, b.businessId, resource, { code, message }).pipe(Effect.ignore)
        yield* Effect.logWarning(`tenant ${b.appId}:${b.businessId} resource ${resource} paused: ${message}`)
        return "paused" as const
      }
      yield* Effect.logWarning(`sync ${b.appId}:${b.businessId} ${Operation.key(op)} failed: ${message}`)
      return "error" as const
    })

  const runOnce = (b: Business, op: Operation.Operation<unknown>, runOptions?: { readonly forceFull?: boolean; readonly gapFill?: boolean }) =>
    Effect.gen(function*() {
      const intervalMs = secondsOr(b.settings.intervalSeconds, options.intervalMs)
      const reconcileMs = secondsOr(b.settings.reconcileSeconds, options.reconcileMs)
      const key = Operation.resourceKey(op)
      const state = yield* store.state(b.appId, b.businessId, key)
      const now = yield* Clock.currentTimeMillis
      // Paused, on hold, or (with several servers) owned by another server right now.
      if (b.status !== "active" || state.paused !== null || !ownership.owns(b.appId, b.businessId)) {
        return { mode: "skipped", pages: 0, records: 0, outcome: "done" } satisfies RunReport
      }

      // A forced full sync starts from the first page, whatever cursor is stored.
      const forced = runOptions?.forceFull === true
      const resuming = (state.cursor !== null || state.windowEnd !== null) && !forced
      const fullDue = forced || resuming || state.fullCompletedAt === null || now - state.fullCompletedAt >= reconcileMs
      // Operations confined to windows without an updated-time filter (bill/list) keep a
      // rolling window instead: the range since the last pass, re-read with overlap.
      const incrementalDue = !fullDue && (op.incremental !== undefined || op.window !== undefined) &&
        (runOptions?.gapFill === true || state.lastRunAt === null || now - state.lastRunAt >= intervalMs)
      if (!fullDue && !incrementalDue) return { mode: "skipped", pages: 0, records: 0, outcome: "done" } satisfies RunReport

      let pages = 0
      let records = 0
      const mode: RunReport["mode"] = fullDue ? (resuming ? "resume" : "full") : "incremental"
      /** Reads every page of one query; with `saveCursor`, each page's cursor is kept after it is durable. */
      const readAll = (range: Readonly<Record<string, unknown>> | undefined, cursor: Paginator.Cursor | undefined, saveCursor: boolean, keyedByRange: boolean, pass?: PassMeta) =>
        client.pages(access(b), op, { size: options.pageSize, cursor, filters: range === undefined ? op.filters : { ...op.filters, ...range } }).pipe(
          Stream.runForEach((page) =>
            Effect.gen(function*() {
              yield* appendPage(b, op, page, mode, keyedByRange ? range : undefined, pass)
              pages++
              records += page.records.length
              // Saved after the page is durable: a crash resumes right here.
              yield* store.updateState(b.appId, b.businessId, key, {
                ...(saveCursor ? { cursor: Option.match(page.next, { onNone: () => null, onSome: (c) => c.text }) } : {}),
                addPages: 1,
                addRecords: page.records.length
              })
            })
          )
        )

      const run = Effect.gen(function*() {
        if (fullDue) {
          const startedAt = resuming && state.fullStartedAt !== null ? state.fullStartedAt : now
          if (!resuming) yield* store.updateState(b.appId, b.businessId, key, { fullStartedAt: startedAt, windowEnd: null, cursor: null })
          const stored = !resuming || state.cursor === null ? undefined : Paginator.cursorFromText(state.cursor)
          let cursor = stored !== undefined && stored._tag === "Success" ? stored.success : undefined
          const window = op.window
          const kind = op.entity?.kind
          // Only a pass that reads everything can tell what is gone: no filters, and a kind
          // whose read model keeps tombstones (docs/architecture.md §4.14).
          const whole = (op.filters === undefined || Object.keys(op.filters).length === 0) && DomainEvent.isDeletableKind(kind)
          const pass: PassMeta = {
            id: whole ? `${key}:${startedAt}` : undefined,
            baseline: state.fullCompletedAt === null
          }
          if (window === undefined) {
            yield* readAll(undefined, cursor, true, false, pass)
          } else {
            // Newest window first, back to the horizon; the window and the cursor in it are
            // saved, so a crash resumes inside the window it was reading.
            const horizon = startedAt - options.horizonMs
            let end = resuming && state.windowEnd !== null ? state.windowEnd : startedAt
            for (let range = SyncWindows.fullWindow(window, end, horizon); range !== undefined; range = SyncWindows.fullWindow(window, end, horizon)) {
              if (end !== state.windowEnd) yield* store.updateState(b.appId, b.businessId, key, { windowEnd: end })
              yield* readAll(SyncWindows.rangeFilters(window, range), cursor, true, true, pass)
              cursor = undefined
              end = SyncWindows.nextWindowEnd(range)
              yield* store.updateState(b.appId, b.businessId, key, { windowEnd: end, cursor: null })
            }
          }
          if (pass.id !== undefined && kind !== undefined) {
            // Appended before the state says "done": a crash in between repeats the pass, and
            // the completion's dedupe key keeps it once. Windowed reads reached back to the
            // horizon only (a day of margin: windows are cut on the service's calendar days).
            const createdFrom = window === undefined ? undefined : startedAt - options.horizonMs + 24 * 3600 * 1000
            yield* log.append([{
              appId: b.appId,
              businessId: b.businessId,
              source: "sync",
              type: DomainEvent.PASS_TYPE,
              body: JSON.stringify({ pass: { id: pass.id, kind, startedAt, ...(createdFrom === undefined ? {} : { createdFrom }) } } satisfies DomainEvent.PassBody),
              dedupeKey: `pass:${b.appId}:${b.businessId}:${pass.id}`,
              meta: { resource: key, pages, records }
            }])
          }
          // Changes made while the full sync ran are caught by the next incremental window.
          const done = yield* Clock.currentTimeMillis
          yield* store.updateState(b.appId, b.businessId, key, { cursor: null, windowEnd: null, fullCompletedAt: done, incrementalBound: startedAt, lastRunAt: done, lastError: null })
        } else {
          const from = (state.incrementalBound ?? state.fullStartedAt ?? now) - options.overlapMs
          const bounds = op.incremental ?? op.window!
          const maxDays = op.incremental !== undefined ? op.incremental.maxDays : op.window!.maxDays
          for (const range of SyncWindows.pieces(from, now, maxDays, bounds.format)) {
            yield* readAll(SyncWindows.rangeFilters(bounds, range), undefined, false, false)
          }
          yield* store.updateState(b.appId, b.businessId, key, { incrementalBound: now, lastRunAt: now, lastError: null })
        }
      })
      return yield* run.pipe(
        // Built after the run: the counters are read when it ends.
        Effect.map((): RunReport => ({ mode, pages, records, outcome: "done" })),
        Effect.tap((report) => Effect.sync(() => options.onRun?.(report, key, undefined))),
        Effect.tap((report) => Effect.logDebug(`sync pass ${report.mode}: ${report.pages} pages, ${report.records} records`)),
        Effect.catch((error) =>
          Effect.map(onError(b, op, error as { _tag: string; message?: string }), (outcome): RunReport => {
            const report: RunReport = { mode, pages, records, outcome, error: errorMessage(error) }
            options.onRun?.(report, key, (error as { _tag?: string })._tag ?? "Unknown")
            return report
          })
        )
      )
    }).pipe(
      Effect.catch((e) => Effect.succeed<RunReport>({ mode: "skipped", pages: 0, records: 0, outcome: "error", error: errorMessage(e) })),
      // Log lines of the pass name its tenant and resource (docs/operations.md, Logs).
      Effect.annotateLogs({ tenant: `${b.appId}:${b.businessId}`, resource: Operation.resourceKey(op) }),
      // A pass starts its own trace (the loop that runs it lives for ever).
      Effect.withSpan("SyncEngine.runOnce", { root: true, attributes: { tenant: `${b.appId}:${b.businessId}`, operation: Operation.resourceKey(op) } })
    )

  const resolved = new Map<string, ReadonlyArray<Operation.Operation<unknown>>>()
  /** A tenant's operations: its settings' resources (resolved once per distinct list) and depots. */
  const operationsOf = (b: Business): Effect.Effect<ReadonlyArray<Operation.Operation<unknown>>, UnknownResource> =>
    Effect.gen(function*() {
      const settings: TenantSettings = b.settings
      if (settings.resources === undefined && settings.depots === undefined) return options.operations
      const cacheKey = JSON.stringify([settings.resources ?? null, settings.depots ?? null])
      const cached = resolved.get(cacheKey)
      if (cached !== undefined) return cached
      const base = settings.resources === undefined ? options.operations : yield* resolveOperations(settings.resources, options.declared ?? [])
      const depots = settings.depots
      // Stock reads narrowed to the tenant's depots (a partial read: it never deletes).
      const ops = depots === undefined ? base : base.map((op) => op.entity?.kind === "inventory" && op.filters === undefined ? Operation.productInventory(depots) as Operation.Operation<unknown> : op)
      resolved.set(cacheKey, ops)
      return ops
    })

  const syncTenant = (appId: string, businessId: string, runOptions?: { readonly forceFull?: boolean; readonly gapFill?: boolean }) =>
    Effect.gen(function*() {
      const b = yield* store.business(appId, businessId).pipe(Effect.orElseSucceed(() => Option.none<Business>()))
      if (Option.isNone(b)) return []
      const reports: Array<RunReport> = []
      const operations = yield* operationsOf(b.value).pipe(
        Effect.catch((e) => Effect.as(Effect.logWarning(`tenant ${appId}:${businessId}: ${e.message}; syncing the server's resources`), options.operations))
      )
      for (const op of operations) {
        // Re-read the tenant: a previous resource may have put it on hold.
        const fresh = yield* store.business(appId, businessId).pipe(Effect.orElseSucceed(() => b))
        reports.push(yield* runOnce(Option.getOrElse(fresh, () => b.value), op, runOptions))
      }
      return reports
    })

  /** Tenants that owe an incremental pull (gap fill), and how to wake each tenant's loop. */
  const owed = new Set<string>()
  const wakers = new Map<string, Deferred.Deferred<void>>()
  const tenantKey = (appId: string, businessId: string) => `${appId}:${businessId}`

  const gapFill = (target: { readonly appId: string; readonly businessId?: string | undefined }, reason: string) =>
    Effect.gen(function*() {
      const targets = target.businessId !== undefined
        ? [{ appId: target.appId, businessId: target.businessId }]
        : yield* store.businesses({ appId: target.appId, status: "active" }).pipe(Effect.orElseSucceed(() => []))
      for (const t of targets) {
        const k = tenantKey(t.appId, t.businessId)
        owed.add(k)
        const wake = wakers.get(k)
        if (wake !== undefined) yield* Deferred.succeed(wake, undefined)
      }
      if (targets.length > 0) yield* Effect.logInfo(`gap fill (${reason}): ${targets.length} tenant(s) of ${target.appId} pull what changed`)
    })

  /**
   * One loop per tenant: sync what is due, then pause until the next interval (or a gap fill
   * wakes it). The first pass after a start is a gap fill (what changed while the server was
   * down), and so is a pass after the tenant's webhooks were silent for its silence period.
   * Tenants started together would stay in step for ever: each pause gets up to 10% more, at
   * random. Never less (unlike Schedule.jittered): a pass that woke before its interval had
   * run would find nothing due and wait a whole interval more.
   */
  const tenantLoop = (appId: string, businessId: string) =>
    Effect.gen(function*() {
      const k = tenantKey(appId, businessId)
      owed.add(k)
      let quietSince = yield* Clock.currentTimeMillis
      for (;;) {
        const b = Option.getOrUndefined(yield* store.business(appId, businessId).pipe(Effect.orElseSucceed(() => Option.none<Business>())))
        const now = yield* Clock.currentTimeMillis
        const silenceMs = secondsOr(b?.settings.gapFillSilenceSeconds, options.gapFillSilenceMs ?? 600_000)
        quietSince = Math.max(quietSince, b?.lastWebhookAt ?? 0)
        if (now - quietSince >= silenceMs) {
          owed.add(k)
          quietSince = now
        }
        const gap = owed.delete(k)
        yield* syncTenant(appId, businessId, { gapFill: gap })
        if (owed.has(k)) continue
        const period = Math.min(secondsOr(b?.settings.intervalSeconds, options.intervalMs), secondsOr(b?.settings.reconcileSeconds, options.reconcileMs), silenceMs)
        const wake = yield* Deferred.make<void>()
        wakers.set(k, wake)
        const pause = Duration.millis(period + Math.round((yield* Random.next) * period * 0.1))
        yield* Effect.race(Effect.sleep(pause), Deferred.await(wake))
        wakers.delete(k)
      }
    })

  const start = Effect.gen(function*() {
    const loops = yield* FiberMap.make<string>()
    const running = new Set<string>()
    const supervise = Effect.gen(function*() {
      const all = yield* store.businesses({ status: "active" }).pipe(Effect.orElseSucceed(() => []))
      // With several servers, only the tenants this one owns (see Ownership).
      const active = all.filter((b) => ownership.owns(b.appId, b.businessId))
      const wanted = new Set(active.map((b) => `${b.appId}:${b.businessId}`))
      for (const b of active) {
        const k = `${b.appId}:${b.businessId}`
        if (running.has(k)) continue
        running.add(k)
        yield* FiberMap.run(loops, k, tenantLoop(b.appId, b.businessId))
      }
      for (const k of running) {
        if (wanted.has(k)) continue
        running.delete(k)
        yield* FiberMap.remove(loops, k)
      }
    })
    // Interrupted when the caller's scope closes, which also interrupts every tenant loop
    // (the FiberMap belongs to the same scope).
    const loop = supervise.pipe(Effect.repeat(Schedule.spaced(options.superviseEveryMs ?? 2000)), Effect.andThen(Effect.never))
    yield* Effect.forkScoped(options.runLoop === undefined ? loop : options.runLoop("sync-supervisor", loop))
  })

  return SyncEngine.of({ runOnce, syncTenant, gapFill, operationsOf, start, operations: options.operations })
})

/**
 * The operations to sync: the configured names (a typed read by key
 * "pos:/v3.0/bill/list", path "bill/list" or record kind "bill"; any other catalogued read
 * that needs no filter, by key or path, into the documents table), then every declared list
 * operation (each declaration, fixed filters included, is its own resource).
 */
export const resolveOperations = (
  names: ReadonlyArray<string>,
  declared: ReadonlyArray<Operation.OperationSpec>
): Effect.Effect<ReadonlyArray<Operation.Operation<unknown>>, UnknownResource> => {
  const typed = Operation.defaultReads as ReadonlyArray<Operation.Operation<unknown>>
  const extra = declared.map((d) => Operation.make(d)).filter((op) => op.kind === "list") as ReadonlyArray<Operation.Operation<unknown>>
  const path = (o: { readonly resource: string; readonly operation: string }) => `${o.resource}/${o.operation}`
  const catalogued = (name: string) =>
    Catalogue.entries.find((e) => e.shape === "list" && (e.requiredFilters ?? []).length === 0 && (Catalogue.keyOf(e) === name || path(e) === name))
  return Effect.forEach(names, (name) => {
    const op = typed.find((o) => Operation.key(o) === name || path(o) === name || o.entity?.kind === name)
    if (op !== undefined) return Effect.succeed(op)
    const entry = catalogued(name)
    return entry !== undefined
      ? Effect.succeed(Operation.fromCatalogue(entry) as Operation.Operation<unknown>)
      : Effect.fail(new UnknownResource({ name, message: `no list operation named ${JSON.stringify(name)}; typed: ${typed.map(path).join(", ")}; any read of docs/api-catalogue.md that needs no filter can be named by path; declare others under "operations"` }))
  }).pipe(Effect.map((ops) => [...ops, ...extra]))
}

export class UnknownResource extends Schema.TaggedError<UnknownResource>()("UnknownResource", {
  name: Schema.String,
  message: Schema.String
}) {}

