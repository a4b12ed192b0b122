/**
 * What the console shows at a glance, in one answer: `GET /admin/overview` (JSON) and
 * `GET /admin/stream` (the same snapshot as server-sent events, one a second, so the console
 * updates without reloading; docs/architecture.md §4.16).
 *
 * A snapshot holds counters, not rates: the console derives webhooks/s and pulls/s from two
 * snapshots and their `at`. A snapshot is made at most once a second and shared by every
 * viewer. Tenants are listed up to `MAX_TENANTS` (those needing attention
 * first); the tenants page reads `/admin/tenants` for the full list.
 */
import { Clock, Effect, Stream } from "effect"
import { type HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Ingestion } from "@ocs/ingestion"
import { PluginRuntime } from "@ocs/plugin-runtime"
import { Json } from "@ocs/protocol"
import { RateLimiter } from "@ocs/transport"
import { LoopHealth } from "@ocs/observability/LoopHealth"
import { Metrics } from "@ocs/observability/ServerMetrics"
import { Notices, SyncState } from "@ocs/sync"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { type AdminOptions, describeBusiness, guard, now } from "./AdminHttp.ts"

export const MAX_TENANTS = 500
const MAX_KEYS = 500
const RANK = { attention: 0, paused: 1, active: 2 } as const

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    const syncState = yield* SyncState.SyncStateStore
    const notices = yield* Notices.Notices
    const limiter = yield* RateLimiter.RateLimiter
    const ingestion = yield* Ingestion.Ingestion
    const plugins = yield* PluginRuntime.PluginRuntime
    const metrics = yield* Metrics
    const loops = yield* LoopHealth
    const admin = guard(options)

    const overview = Effect.gen(function*() {
      const at = yield* now
      const businesses = yield* store.businesses()
      const states = yield* syncState.states()
      // Per tenant: how far its resources are (full reads completed) and its last run.
      const progress = new Map<string, { resources: number; complete: number; pages: number; records: number; lastRunAt: number | null; errors: number }>()
      for (const s of states) {
        const k = `${s.appId}:${s.businessId}`
        const p = progress.get(k) ?? { resources: 0, complete: 0, pages: 0, records: 0, lastRunAt: null, errors: 0 }
        p.resources++
        if (s.fullCompletedAt !== null && s.cursor === null) p.complete++
        p.pages += s.pages
        p.records += s.records
        if (s.lastRunAt !== null && (p.lastRunAt === null || s.lastRunAt > p.lastRunAt)) p.lastRunAt = s.lastRunAt
        if (s.lastError !== null || s.paused !== null) p.errors++
        progress.set(k, p)
      }
      const byStatus = { active: 0, paused: 0, attention: 0 }
      for (const b of businesses) byStatus[b.status]++
      const shown = [...businesses].sort((a, b) => RANK[a.status] - RANK[b.status]).slice(0, MAX_TENANTS)
      const keys = [...(yield* limiter.metrics)]
        .sort((a, b) => (b.lockedUntil ?? 0) - (a.lockedUntil ?? 0) || b.recentCalls / b.limit - a.recentCalls / a.limit)
      return {
        at,
        tenants: {
          total: businesses.length,
          byStatus,
          list: shown.map((b) => ({
            ...describeBusiness(b, at, options.silenceAlertMs),
            sync: progress.get(`${b.appId}:${b.businessId}`) ?? null
          }))
        },
        webhooks: yield* ingestion.metrics,
        sync: yield* metrics.syncTotals,
        keys: { total: keys.length, locked: keys.filter((k) => k.lockedUntil !== undefined).length, list: keys.slice(0, MAX_KEYS) },
        loops: yield* loops.snapshot,
        errors: yield* notices.recentErrors(20),
        plugins: yield* plugins.metrics
      }
    })

    // One snapshot a second at most, however many consoles follow the stream: the cost of a
    // snapshot (every tenant's sync state) does not grow with the number of viewers.
    let cached: { readonly at: number; readonly text: string } | undefined
    const snapshotText = Effect.gen(function*() {
      const at = yield* now
      if (cached !== undefined && at - cached.at < 900 && at >= cached.at) return cached.text
      const text = Json.stringify(yield* overview)
      cached = { at, text }
      return text
    })

    yield* router.add(
      "GET",
      "/admin/overview",
      admin(Effect.map(snapshotText, (text) => HttpServerResponse.text(text, { contentType: "application/json" })))
    )

    const encoder = new TextEncoder()
    yield* router.add(
      "GET",
      "/admin/stream",
      admin(Effect.gen(function*() {
        // A stream opened by a console session lives no longer than the session: it ends at
        // sign-out and at idle or maximum age (the key's streams end with the server).
        const request = yield* HttpServerRequest.HttpServerRequest
        const sessions = options.sessions
        const viaKey = request.headers["x-admin-key"] !== undefined || request.headers["authorization"] !== undefined
        const session = viaKey || sessions === undefined ? undefined : sessions.fromCookie(request.headers["cookie"], yield* now)
        const clock = yield* Clock.Clock
        const sessionAlive = () => session === undefined || sessions!.alive(session.id, clock.currentTimeMillisUnsafe())
        const events = Stream.tick("1 second").pipe(
          // Ends when the server starts to shut down, so an open console never holds it up.
          Stream.takeWhile(() => options.ready() && sessionAlive()),
          Stream.mapEffect(() =>
            snapshotText.pipe(
              Effect.map((text) => `event: snapshot\ndata: ${text}\n\n`),
              Effect.catch((e) =>
                Effect.logError("console stream: snapshot failed", e).pipe(
                  Effect.as(`event: failure\ndata: ${JSON.stringify({ error: "snapshot failed; see the server log" })}\n\n`)
                )
              )
            )
          ),
          Stream.map((text) => encoder.encode(text))
        )
        return HttpServerResponse.stream(events, {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
        })
      }))
    )
  })
