/** `/healthz` (the process answers), `/readyz` (it takes traffic) and `/metrics` (Prometheus). */
import { Effect, Option } from "effect"
import { type HttpRouter, HttpServerResponse } from "effect/http"
import { Ingestion } from "@ocs/ingestion"
import { PluginRuntime } from "@ocs/plugin-sdk"
import { RateLimiter } from "@ocs/transport"
import * as ProjectionLag from "../ProjectionLag.ts"
import { Metrics } from "../ServerMetrics.ts"
import { TenantStore } from "../TenantStore.ts"
import { type AdminOptions, json, problem, type Readiness } from "./AdminHttp.ts"

/**
 * Ready: listening, every background loop up, and the read models within their lag bounds.
 * A 503 names what is wrong, so an operator reading the probe knows where to look.
 */
const readiness = (r: Readiness) =>
  Effect.gen(function*() {
    const loops = yield* r.loops.snapshot
    const down = loops.filter((l) => !l.up)
    const lag = yield* r.lag.lag
    // Names and counts only: /readyz needs no key, and an error's message may name files (the
    // cause is in the log, under the loop's name).
    const reasons: Array<string> = down.map((l) => `loop ${l.name} is down (${l.restarts} restarts; see the server log)`)
    if (Option.isSome(lag)) {
      if (r.maxLagRecords !== undefined && lag.value.records > r.maxLagRecords) {
        reasons.push(`projection lag ${lag.value.records} records exceeds ${r.maxLagRecords}`)
      }
      if (r.maxLagSeconds !== undefined && lag.value.seconds > r.maxLagSeconds) {
        reasons.push(`projection lag ${Math.round(lag.value.seconds)} s exceeds ${r.maxLagSeconds} s`)
      }
    }
    return { reasons, down: down.map((l) => l.name), lag: Option.getOrNull(lag) }
  })

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const ingestion = yield* Ingestion.Ingestion
    const limiter = yield* RateLimiter.RateLimiter
    const store = yield* TenantStore
    const plugins = yield* PluginRuntime.PluginRuntime
    const metrics = yield* Metrics
    yield* router.add("GET", "/healthz", Effect.succeed(json({ status: "ok" })))
    yield* router.add(
      "GET",
      "/readyz",
      Effect.gen(function*() {
        if (!options.ready()) return problem(503, "starting")
        if (options.readiness === undefined) return json({ status: "ready" })
        const r = yield* readiness(options.readiness)
        return r.reasons.length === 0
          ? json({ status: "ready", lag: r.lag })
          : json({ status: "not ready", error: r.reasons.join("; "), loopsDown: r.down, lag: r.lag }, 503)
      })
    )
    yield* router.add(
      "GET",
      "/metrics",
      Effect.gen(function*() {
        const receiver = yield* ingestion.prometheus
        const keys = yield* limiter.metrics
        const totals = yield* limiter.totals
        const businesses = yield* store.businesses().pipe(Effect.orElseSucceed(() => []))
        const pluginText = yield* plugins.prometheus.pipe(Effect.orElseSucceed(() => ""))
        const loopText = options.readiness === undefined ? "" : yield* options.readiness.loops.prometheus
        const lagText = options.readiness === undefined ? "" : ProjectionLag.prometheus(yield* options.readiness.lag.lag)
        const text = [receiver.trimEnd(), metrics.prometheus(keys, totals, businesses), loopText, lagText, pluginText.trimEnd()]
          .filter((t) => t !== "").join("\n") + "\n"
        return HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4" })
      })
    )
  })
