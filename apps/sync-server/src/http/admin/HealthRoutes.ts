/** `/healthz` (the process answers), `/readyz` (it takes traffic) and `/metrics` (Prometheus). */
import { Effect, Option } from "effect"
import { type HttpRouter, HttpServerResponse } from "effect/http"
import { CommandEngine } from "@ocs/commands"
import { PluginRuntime } from "@ocs/plugin-runtime"
import { CommandKind } from "@ocs/protocol"
import { RateLimiter } from "@ocs/transport"
import { ReadModels } from "@ocs/read-models"
import { KafkaEventLog } from "@ocs/event-log"
import type { LoopStatus } from "@ocs/observability/LoopHealth"
import { Metrics } from "@ocs/observability/ServerMetrics"
import { SyncState } from "@ocs/sync"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { type AdminOptions, json, problem, type Readiness } from "./AdminHttp.ts"

/**
 * "A webhook sent now would be stored": not while the latest appends fail (a full disk, a
 * stalled store); ready again with the first one that succeeds.
 */
export const storeReason = (r: Readiness): string | undefined => {
  const health = r.webhookStore?.()
  return health === undefined || !health.failing
    ? undefined
    : `webhooks are not being stored (${health.failures} failed or timed out in a row since ${new Date(health.since ?? 0).toISOString()}; see the server log)`
}

/**
 * Why a loop that is down makes the server not ready: its own problem when it reports one (the
 * Kafka relay failing for a while, ../../ops/RelayHealth.ts), else its restarts. Names and
 * counts only: /readyz needs no key, and an error's message may name files (the cause is in the
 * log, under the loop's name).
 */
const loopDownReason = (l: LoopStatus) =>
  l.problem !== null ? `loop ${l.name} is down: ${l.problem}` : `loop ${l.name} is down (${l.restarts} restarts; see the server log)`

/**
 * Ready: listening, webhooks being stored, every background loop up, and the read models within their lag bounds.
 * A 503 names what is wrong, so an operator reading the probe knows where to look.
 */
const readiness = (r: Readiness) =>
  Effect.gen(function*() {
    const loops = yield* r.loops.snapshot
    const down = loops.filter((l) => !l.up)
    const lag = yield* r.lag.lag
    const reasons: Array<string> = down.map(loopDownReason)
    const store = storeReason(r)
    if (store !== undefined) reasons.unshift(store)
    if (Option.isSome(lag)) {
      if (r.maxLagRecords !== undefined && lag.value.records > r.maxLagRecords) {
        reasons.push(`projection lag ${lag.value.records} records exceeds ${r.maxLagRecords}`)
      }
      if (r.maxLagSeconds !== undefined && lag.value.seconds > r.maxLagSeconds) {
        reasons.push(`projection lag ${Math.round(lag.value.seconds)} s exceeds ${r.maxLagSeconds} s`)
      }
    }
    // Kafka mode: shown, not a reason (a short broker outage is what the outbox is for; a relay
    // that keeps failing is a loop down, above).
    const relay = Option.getOrUndefined(yield* r.lag.relayBacklog)
    return { reasons, down: down.map((l) => l.name), lag: Option.getOrNull(lag), ...(relay === undefined ? {} : { unrelayed: relay }) }
  })

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const limiter = yield* RateLimiter.RateLimiter
    const store = yield* TenantRegistry
    const syncState = yield* SyncState.SyncStateStore
    const plugins = yield* PluginRuntime.PluginRuntime
    const metrics = yield* Metrics
    const readModels = yield* ReadModels.ReadModels
    const engine = yield* CommandEngine.CommandEngine
    // The write URLs' budget keys end with their path (RateLimiter.keyString).
    const writePaths = CommandKind.names.map((k) => `:${CommandKind.kinds[k].operation.path}`)
    const commandMetrics = Effect.gen(function*() {
      const now = Date.now()
      const keys = yield* limiter.metrics
      const writeKeysLocked = keys.filter((k) => (k.lockedUntil ?? 0) > now && writePaths.some((p) => k.key.endsWith(p))).length
      return { ...(yield* engine.metrics), writeKeysLocked }
    })
    yield* router.add("GET", "/healthz", Effect.succeed(json({ status: "ok" })))
    yield* router.add(
      "GET",
      "/readyz",
      Effect.gen(function*() {
        if (!options.ready()) return problem(503, "starting")
        if (options.readiness === undefined) return json({ status: "ready" })
        const r = yield* readiness(options.readiness)
        return r.reasons.length === 0
          ? json({ status: "ready", lag: r.lag, ...(r.unrelayed === undefined ? {} : { unrelayed: r.unrelayed }) })
          : json({ status: "not ready", error: r.reasons.join("; "), loopsDown: r.down, lag: r.lag, ...(r.unrelayed === undefined ? {} : { unrelayed: r.unrelayed }) }, 503)
      })
    )
    yield* router.add(
      "GET",
      "/metrics",
      // One registry, one exporter (docs/architecture.md §4.17): the ingestion counts into the
      // same registry; the rest is published from its sources first.
      Effect.gen(function*() {
        const r = options.readiness
        const pluginMetrics = yield* plugins.metrics.pipe(Effect.orElseSucceed(() => []))
        const text = yield* metrics.prometheus({
          keys: yield* limiter.metrics,
          totals: yield* limiter.totals,
          businesses: yield* store.businesses().pipe(Effect.orElseSucceed(() => [])),
          loops: r === undefined ? [] : yield* r.loops.snapshot,
          projectionLag: r === undefined ? Option.none() : yield* r.lag.lag,
          relayBacklog: r === undefined ? Option.none() : yield* r.lag.relayBacklog,
          relay: yield* Effect.serviceOption(KafkaEventLog.RelayProgress).pipe(Effect.flatMap((p) => Effect.transposeOption(Option.map(p, (relay) => relay.status)))),
          plugins: r === undefined ? pluginMetrics : yield* Effect.forEach(pluginMetrics, (p) =>
            Effect.map(r.lag.lagAfter(p.lastOffset ?? 0), (lag) => ({ ...p, lagSeconds: Option.match(lag, { onNone: () => null, onSome: (l) => l.seconds }) }))),
          readModelRows: yield* readModels.rowCounts.pipe(Effect.orElseSucceed(() => ({}))),
          syncStates: yield* syncState.states().pipe(Effect.orElseSucceed(() => [])),
          commands: yield* commandMetrics
        })
        return HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4" })
      })
    )
  })
