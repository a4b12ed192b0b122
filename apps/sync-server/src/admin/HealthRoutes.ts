/** `/healthz` (the process answers), `/readyz` (it takes traffic) and `/metrics` (Prometheus). */
import { Effect } from "effect"
import { type HttpRouter, HttpServerResponse } from "effect/http"
import { Ingestion } from "@ocs/ingestion"
import { PluginRuntime } from "@ocs/plugin-sdk"
import { RateLimiter } from "@ocs/transport"
import { Metrics } from "../ServerMetrics.ts"
import { TenantStore } from "../TenantStore.ts"
import { type AdminOptions, json, problem } from "./AdminHttp.ts"

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const ingestion = yield* Ingestion.Ingestion
    const limiter = yield* RateLimiter.RateLimiter
    const store = yield* TenantStore
    const plugins = yield* PluginRuntime.PluginRuntime
    const metrics = yield* Metrics
    yield* router.add("GET", "/healthz", Effect.succeed(json({ status: "ok" })))
    yield* router.add("GET", "/readyz", Effect.sync(() => (options.ready() ? json({ status: "ready" }) : problem(503, "starting"))))
    yield* router.add(
      "GET",
      "/metrics",
      Effect.gen(function*() {
        const receiver = yield* ingestion.prometheus
        const keys = yield* limiter.metrics
        const totals = yield* limiter.totals
        const businesses = yield* store.businesses().pipe(Effect.orElseSucceed(() => []))
        const pluginText = yield* plugins.prometheus.pipe(Effect.orElseSucceed(() => ""))
        const text = [receiver.trimEnd(), metrics.prometheus(keys, totals, businesses), pluginText.trimEnd()].filter((t) => t !== "").join("\n") + "\n"
        return HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4" })
      })
    )
  })
