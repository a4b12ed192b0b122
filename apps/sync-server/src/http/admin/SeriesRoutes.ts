/**
 * The console's charts (docs/architecture.md §4.35): the server samples its own counters every
 * `SAMPLE_EVERY_MS` into bounded in-memory series (@ocs/observability Series) and answers them:
 *
 * - `GET /admin/series?range=hour|day`: the server's webhooks (accepted, duplicates, refused),
 *   pages pulled, calls, locks after ERR_429, projection lag and each plugin's lag;
 * - `GET /admin/tenants/:appId/:businessId/series?range=`: one tenant's pages, records,
 *   calls and locks (its budget keys summed), and per resource its last passes (seen as
 *   changes of the sync state between samples), its last full pass's duration and when its
 *   next pass is due;
 * - `GET /admin/budgets/series`: budget use (calls in the window / limit) per key, last hour.
 *
 * The series live as long as the process: a reload of the console shows history, a restart
 * starts empty charts (the metrics on `/metrics` are for long-term history).
 */
import { Clock, Effect, Option } from "effect"
import type { HttpRouter } from "effect/http"
import { Ingestion } from "@ocs/ingestion"
import { Series } from "@ocs/observability"
import { Metrics } from "@ocs/observability/ServerMetrics"
import { PluginRuntime } from "@ocs/plugin-runtime"
import { SyncState } from "@ocs/sync"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { RateLimiter } from "@ocs/transport"
import { type AdminOptions, existingTenant, guard, json, problem, searchParams } from "./AdminHttp.ts"

export const SAMPLE_EVERY_MS = 5_000

/** Passes kept per resource of a tenant, for the tenant's sync-over-time chart. */
export const PASSES_KEPT = 30
/** Tenants whose passes are kept (the most recently active). */
const PASS_TENANTS = 1000

/** A pass as the sampler saw it: the sync state's run time moved, with the pages and records it added. */
interface Pass {
  readonly at: number
  readonly pages: number
  readonly records: number
}

/**
 * When a resource's next pass is due, as the planner decides it (@ocs/sync Planner): a full
 * pass once `reconcile` passed since the last completed one (now, while one is running or
 * none completed), an incremental one once `interval` passed since the last run; the earlier.
 * Null while the tenant or the resource is paused. Resources without an incremental read wait
 * for the full one: the earlier time is then early, never late.
 */
export const nextDueAt = (
  s: SyncState.ResourceState,
  tenant: { readonly status: string; readonly settings: { readonly intervalSeconds?: number | undefined; readonly reconcileSeconds?: number | undefined } },
  times: { readonly intervalMs: number; readonly reconcileMs: number },
  now: number
): number | null => {
  if (tenant.status !== "active" || s.paused !== null) return null
  if (s.cursor !== null || s.windowEnd !== null || s.fullCompletedAt === null) return now
  const interval = tenant.settings.intervalSeconds === undefined ? times.intervalMs : tenant.settings.intervalSeconds * 1000
  const reconcile = tenant.settings.reconcileSeconds === undefined ? times.reconcileMs : tenant.settings.reconcileSeconds * 1000
  const full = s.fullCompletedAt + reconcile
  const incremental = s.lastRunAt === null ? now : s.lastRunAt + interval
  return Math.min(full, incremental)
}

const rangeParam = (params: URLSearchParams, ranges: Series.Ranges) =>
  Effect.suspend(() => {
    const range = params.get("range") ?? "hour"
    return ranges[range] === undefined
      ? Effect.fail(problem(400, `range must be ${Object.keys(ranges).join(" or ")}, got ${JSON.stringify(range.slice(0, 40))}`))
      : Effect.succeed(range)
  })

/** The tenant of a budget key (`appId:businessId:family:path`). */
const tenantOfKey = (key: string) => {
  const i = key.indexOf(":")
  const j = i < 0 ? -1 : key.indexOf(":", i + 1)
  return j < 0 ? undefined : key.slice(0, j)
}

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    const syncState = yield* SyncState.SyncStateStore
    const limiter = yield* RateLimiter.RateLimiter
    const ingestion = yield* Ingestion.Ingestion
    const plugins = yield* PluginRuntime.PluginRuntime
    const metrics = yield* Metrics
    const admin = guard(options)
    const series = new Series.Store()
    // Per tenant (most recently active last) and resource: the last passes seen.
    const passes = new Map<string, Map<string, Array<Pass>>>()
    const lastSeen = new Map<string, { readonly lastRunAt: number | null; readonly pages: number; readonly records: number }>()
    const notePass = (s: SyncState.ResourceState) => {
      const id = `${s.appId}:${s.businessId}`
      const key = `${id}\u0000${s.resource}`
      const before = lastSeen.get(key)
      lastSeen.set(key, { lastRunAt: s.lastRunAt, pages: s.pages, records: s.records })
      if (before === undefined || s.lastRunAt === null || s.lastRunAt === before.lastRunAt) return
      let tenant = passes.get(id)
      if (tenant === undefined) {
        tenant = new Map()
        if (passes.size >= PASS_TENANTS) passes.delete(passes.keys().next().value!)
      } else {
        passes.delete(id)
      }
      passes.set(id, tenant)
      const list = tenant.get(s.resource) ?? []
      list.push({ at: s.lastRunAt, pages: Math.max(0, s.pages - before.pages), records: Math.max(0, s.records - before.records) })
      if (list.length > PASSES_KEPT) list.shift()
      tenant.set(s.resource, list)
    }

    const read = Effect.gen(function*() {
      const webhooks = yield* ingestion.metrics
      const sync = yield* metrics.syncTotals
      const totals = yield* limiter.totals
      const keys = yield* limiter.metrics
      const refused = Object.values(webhooks.rejected).reduce((n, v) => n + v, 0)
      const levels: Record<string, number> = {}
      const lag = options.readiness === undefined ? Option.none() : yield* options.readiness.lag.lag
      if (Option.isSome(lag)) levels["projectionLag"] = lag.value.records
      for (const p of yield* Effect.orElseSucceed(plugins.metrics, () => [])) {
        if (p.lag !== null) levels[`pluginLag:${p.name}`] = p.lag
      }
      // Per tenant: pages and records from the sync state (kept across restarts), calls and
      // locks from its budget keys (kept while the keys are).
      const tenants = new Map<string, Record<string, number>>()
      for (const s of yield* Effect.orElseSucceed(syncState.states(), () => [])) {
        notePass(s)
        const id = `${s.appId}:${s.businessId}`
        const t = tenants.get(id) ?? { pages: 0, records: 0, calls: 0, locks: 0 }
        t["pages"]! += s.pages
        t["records"]! += s.records
        tenants.set(id, t)
      }
      const budget = new Map<string, Record<string, number>>()
      for (const k of keys) {
        const id = tenantOfKey(k.key)
        if (id !== undefined) {
          const t = tenants.get(id) ?? { pages: 0, records: 0, calls: 0, locks: 0 }
          t["calls"]! += k.calls
          t["locks"]! += k.locks
          tenants.set(id, t)
        }
        budget.set(k.key, { used: k.limit > 0 ? k.recentCalls / k.limit : 0 })
      }
      return {
        counters: {
          accepted: webhooks.accepted,
          duplicates: webhooks.duplicates,
          refused,
          pages: sync.pages,
          calls: totals.calls,
          locks: totals.locks
        },
        levels,
        tenants,
        keys: budget
      } satisfies Series.Reading
    })
    yield* Effect.forkScoped(Series.run(series, read, SAMPLE_EVERY_MS))

    yield* router.add("GET", "/admin/series", admin(Effect.gen(function*() {
      const range = yield* rangeParam(yield* searchParams, series.server.ranges)
      const at = yield* Clock.currentTimeMillis
      return json({ range, at, sampleEveryMs: SAMPLE_EVERY_MS, ...series.server.read(range, at)! })
    })))

    yield* router.add("GET", "/admin/tenants/:appId/:businessId/series", admin(Effect.gen(function*() {
      const t = yield* existingTenant(store)
      const range = yield* rangeParam(yield* searchParams, series.tenants.ranges)
      const at = yield* Clock.currentTimeMillis
      const set = series.tenants.get(`${t.appId}:${t.businessId}`)
      const resolution = series.tenants.ranges[range]!
      // A tenant with nothing recorded (idle since the start) has empty series, not a 404.
      const answer = set?.read(range, at) ?? {
        stepMs: resolution.stepMs,
        start: Math.floor(at / resolution.stepMs) * resolution.stepMs - (resolution.points - 1) * resolution.stepMs,
        series: {}
      }
      const kept = passes.get(`${t.appId}:${t.businessId}`)
      const resources = (yield* syncState.states(t.appId, t.businessId)).map((s) => ({
        resource: s.resource,
        passes: kept?.get(s.resource) ?? [],
        lastFullMs: s.fullCompletedAt !== null && s.fullStartedAt !== null && s.fullCompletedAt >= s.fullStartedAt ? s.fullCompletedAt - s.fullStartedAt : null,
        nextDueAt: options.syncTimes === undefined ? null : nextDueAt(s, t, options.syncTimes, at)
      }))
      return json({ appId: t.appId, businessId: t.businessId, range, at, ...answer, resources })
    })))

    yield* router.add("GET", "/admin/budgets/series", admin(Effect.gen(function*() {
      const at = yield* Clock.currentTimeMillis
      const keys = series.keys.ids().slice(-200).toReversed().map((key) => {
        const w = series.keys.get(key)!.read("hour", at)!
        return { key, stepMs: w.stepMs, start: w.start, used: w.series["used"] ?? [] }
      })
      return json({ at, keys })
    })))
  })
