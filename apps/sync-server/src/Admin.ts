/**
 * The admin HTTP API (effect/http router), `/healthz`, `/readyz` and `/metrics`.
 *
 * Everything under `/admin` needs the admin key (`x-admin-key: <key>` or
 * `Authorization: Bearer <key>`); without it: 401. Access tokens are accepted on input and
 * never returned or logged.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Ids, Json } from "@ocs/protocol"
import type { ReadModels } from "@ocs/read-models"
import type { Ingestion } from "@ocs/ingestion"
import type { PluginRuntime } from "@ocs/plugin-sdk"
import type { RateLimiter } from "@ocs/transport"
import * as Config from "./Config.ts"
import { safeEqual } from "./Secrets.ts"
import type { SyncEngine } from "./SyncEngine.ts"
import type { Business, TenantStore } from "./TenantStore.ts"
import type { ServerMetrics } from "./ServerMetrics.ts"

export interface AdminDeps {
  readonly adminKey: Redacted.Redacted<string> | undefined
  readonly store: TenantStore["Service"]
  readonly readModels: ReadModels.ReadModels["Service"]
  readonly limiter: RateLimiter.RateLimiter["Service"]
  readonly ingestion: Ingestion.Ingestion["Service"]
  readonly sync: SyncEngine["Service"]
  readonly plugins: PluginRuntime.PluginRuntime["Service"]
  readonly ownership: () => unknown
  readonly metrics: ServerMetrics
  readonly ready: () => boolean
  readonly silenceAlertMs: number
  readonly now: () => number
}

const json = (body: unknown, status = 200) =>
  HttpServerResponse.text(Json.stringify(body), { status, contentType: "application/json" })

const problem = (status: number, message: string) => json({ error: message }, status)

// The admin API takes what the configuration file takes (same fields, same checks).
const AppInput = Schema.Struct({
  appId: Config.AppConfig.fields.appId,
  verifyTokens: Config.AppConfig.fields.verifyTokens.check(Schema.isMinLength(1)),
  enabled: Schema.optional(Schema.Boolean)
})

const TenantInput = Schema.Struct({ appId: Config.AppConfig.fields.appId, ...Config.BusinessConfig.fields })

/** Parses `YYYY-MM-DD...` or epoch ms; undefined when absent. */
export const parseDate = (value: string | undefined): number | null => {
  if (value === undefined) return null
  const n = /^\d+$/.test(value) ? Number(value) : Date.parse(value)
  if (!Number.isFinite(n)) throw new Error(`not a date: ${value}`)
  return n
}

const DAY = 24 * 3600 * 1000

/** What the admin API shows of a tenant (never its token). */
export const describeBusiness = (b: Business, now: number, silenceAlertMs: number) => ({
  appId: b.appId,
  businessId: b.businessId,
  status: b.status,
  attention: b.attention,
  version: b.version,
  permissions: b.permissions,
  depots: b.depots,
  grantedAt: b.grantedAt,
  expiresAt: b.expiresAt,
  expiresInDays: b.expiresAt === null ? null : Math.floor((b.expiresAt - now) / DAY),
  lastWebhookAt: b.lastWebhookAt,
  webhookSilent: b.lastWebhookAt === null ? null : now - b.lastWebhookAt > silenceAlertMs
})

const body = <A>(schema: Schema.Decoder<A>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const text = yield* request.text
    const parsed = Json.parse(text)
    if (parsed._tag === "Failure") return yield* Effect.fail(problem(400, parsed.failure.message))
    return yield* Schema.decodeUnknownEffect(schema)(parsed.success).pipe(
      Effect.mapError((e) => problem(400, `invalid body: ${e.message}`))
    )
  })

const canonical = (u: string | number | bigint, what: string) =>
  Effect.suspend(() => {
    const id = Ids.normalize(typeof u === "string" ? u.trim() : u)
    return id === undefined ? Effect.fail(problem(400, `${what} must be an integer`)) : Effect.succeed(id as string)
  })

const queryInt = (params: URLSearchParams, name: string): number | undefined => {
  const v = params.get(name)
  return v === null || !/^\d+$/.test(v) ? undefined : Number(v)
}

export const routes = (deps: AdminDeps) =>
  Effect.gen(function*() {
    const router = yield* HttpRouter.make

    const authorized = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (deps.adminKey === undefined) return false
      const header = request.headers["x-admin-key"] ?? request.headers["authorization"]?.replace(/^Bearer\s+/i, "")
      return typeof header === "string" && safeEqual(header, Redacted.value(deps.adminKey))
    })

    /** Runs `handler` only with the admin key; failures that are responses are answered. */
    const admin = <E>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext>) =>
      Effect.gen(function*() {
        if (!(yield* authorized)) return problem(401, "admin key required (x-admin-key or Authorization: Bearer)")
        return yield* handler.pipe(
          Effect.catch((e: unknown) =>
            HttpServerResponse.isHttpServerResponse(e)
              ? Effect.succeed(e)
              : Effect.logError("admin request failed", e).pipe(Effect.as(problem(500, e instanceof Error ? e.message : "internal error")))
          )
        )
      })

    const searchParams = Effect.map(HttpServerRequest.HttpServerRequest, (r) => new URL(r.url, "http://x").searchParams)

    const tenantParam = Effect.gen(function*() {
      const params = yield* HttpRouter.params
      const appId = yield* canonical(params["appId"] ?? "", "appId")
      const businessId = yield* canonical(params["businessId"] ?? "", "businessId")
      return { appId, businessId }
    })

    const existing = Effect.gen(function*() {
      const t = yield* tenantParam
      const b = yield* deps.store.business(t.appId, t.businessId)
      if (Option.isNone(b)) return yield* Effect.fail(problem(404, `no tenant ${t.appId}:${t.businessId}`))
      return b.value
    })

    // -- health -------------------------------------------------------------------------------
    yield* router.add("GET", "/healthz", Effect.succeed(json({ status: "ok" })))
    yield* router.add("GET", "/readyz", Effect.sync(() => (deps.ready() ? json({ status: "ready" }) : problem(503, "starting"))))
    yield* router.add(
      "GET",
      "/metrics",
      Effect.gen(function*() {
        const ingestion = yield* deps.ingestion.prometheus
        const limiter = yield* deps.limiter.metrics
        const businesses = yield* deps.store.businesses().pipe(Effect.orElseSucceed(() => []))
        const plugins = yield* deps.plugins.prometheus.pipe(Effect.orElseSucceed(() => ""))
        const text = [ingestion.trimEnd(), deps.metrics.prometheus(limiter, businesses), plugins.trimEnd()].filter((t) => t !== "").join("\n") + "\n"
        return HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4" })
      })
    )

    // -- applications ---------------------------------------------------------------------------
    yield* router.add("GET", "/admin/apps", admin(Effect.map(deps.store.apps(), (apps) => json({ apps }))))
    yield* router.add(
      "POST",
      "/admin/apps",
      admin(Effect.gen(function*() {
        const input = yield* body(AppInput)
        const appId = yield* canonical(input.appId, "appId")
        yield* deps.store.upsertApp(appId, input.verifyTokens, input.enabled ?? true)
        return json({ appId, verifyTokens: input.verifyTokens.length, enabled: input.enabled ?? true }, 201)
      }))
    )
    yield* router.add(
      "DELETE",
      "/admin/apps/:appId",
      admin(Effect.gen(function*() {
        const appId = yield* canonical((yield* HttpRouter.params)["appId"] ?? "", "appId")
        return (yield* deps.store.removeApp(appId)) ? json({ removed: appId }) : problem(404, `no application ${appId}`)
      }))
    )

    // -- tenants ---------------------------------------------------------------------------------
    yield* router.add(
      "GET",
      "/admin/tenants",
      admin(Effect.gen(function*() {
        const params = yield* searchParams
        const status = params.get("status")
        const list = yield* deps.store.businesses({
          appId: params.get("appId") ?? undefined,
          status: status === "active" || status === "paused" || status === "attention" ? status : undefined
        })
        const now = deps.now()
        return json({ tenants: list.map((b) => describeBusiness(b, now, deps.silenceAlertMs)) })
      }))
    )
    yield* router.add(
      "POST",
      "/admin/tenants",
      admin(Effect.gen(function*() {
        const input = yield* body(TenantInput)
        const appId = yield* canonical(input.appId, "appId")
        const businessId = yield* canonical(input.businessId, "businessId")
        if (Option.isNone(yield* deps.store.app(appId))) return problem(409, `application ${appId} does not exist: POST /admin/apps first`)
        const dates = yield* Effect.try({
          try: () => ({ grantedAt: parseDate(input.grantedAt), expiresAt: parseDate(input.expiresAt) }),
          catch: (e) => problem(400, e instanceof Error ? e.message : String(e))
        })
        yield* deps.store.upsertBusiness({ appId, businessId, accessToken: input.accessToken, version: input.version, permissions: input.permissions, depots: input.depots, ...dates })
        yield* deps.store.clearNotices(appId, businessId, "expiry-")
        const b = yield* deps.store.business(appId, businessId)
        return json(describeBusiness(Option.getOrThrow(b), deps.now(), deps.silenceAlertMs), 201)
      }))
    )
    yield* router.add(
      "GET",
      "/admin/tenants/:appId/:businessId",
      admin(Effect.gen(function*() {
        const b = yield* existing
        const states = yield* deps.store.states(b.appId, b.businessId)
        const counts = yield* deps.readModels.counts(b)
        return json({ ...describeBusiness(b, deps.now(), deps.silenceAlertMs), sync: states, counts })
      }))
    )
    const setStatus = (status: "paused" | "active") =>
      admin(Effect.gen(function*() {
        const b = yield* existing
        yield* deps.store.setStatus(b.appId, b.businessId, status)
        return json({ appId: b.appId, businessId: b.businessId, status })
      }))
    yield* router.add("POST", "/admin/tenants/:appId/:businessId/pause", setStatus("paused"))
    yield* router.add("POST", "/admin/tenants/:appId/:businessId/resume", setStatus("active"))
    yield* router.add(
      "DELETE",
      "/admin/tenants/:appId/:businessId",
      admin(Effect.gen(function*() {
        const b = yield* existing
        yield* deps.store.removeBusiness(b.appId, b.businessId)
        return json({ removed: `${b.appId}:${b.businessId}` })
      }))
    )
    yield* router.add(
      "POST",
      "/admin/tenants/:appId/:businessId/sync",
      admin(Effect.gen(function*() {
        const b = yield* existing
        const params = yield* searchParams
        const reports = yield* deps.sync.syncTenant(b.appId, b.businessId, { forceFull: params.get("full") === "true" })
        return json({ reports })
      }))
    )

    // -- operations ------------------------------------------------------------------------------
    yield* router.add(
      "GET",
      "/admin/locks",
      admin(Effect.map(deps.limiter.metrics, (keys) => json({ locks: keys.filter((k) => k.lockedUntil !== undefined), keys: keys.length })))
    )
    yield* router.add(
      "GET",
      "/admin/budgets",
      admin(Effect.map(deps.limiter.metrics, (keys) => json({ keys })))
    )
    yield* router.add(
      "GET",
      "/admin/errors",
      admin(Effect.gen(function*() {
        const params = yield* searchParams
        return json({ errors: yield* deps.store.recentErrors(queryInt(params, "limit") ?? 100, params.get("appId") ?? undefined) })
      }))
    )
    yield* router.add("GET", "/admin/sync", admin(Effect.map(deps.store.states(), (states) => json({ sync: states }))))
    yield* router.add("GET", "/admin/ownership", admin(Effect.sync(() => json(deps.ownership()))))

    // -- plugins ---------------------------------------------------------------------------------
    yield* router.add("GET", "/admin/plugins", admin(Effect.map(deps.plugins.metrics, (plugins) => json({ plugins }))))
    yield* router.add(
      "GET",
      "/admin/plugins/dead-letters",
      admin(Effect.gen(function*() {
        const params = yield* searchParams
        return json({ deadLetters: yield* deps.plugins.deadLetters(params.get("plugin") ?? undefined) })
      }))
    )
    yield* router.add(
      "POST",
      "/admin/plugins/redrive",
      admin(Effect.gen(function*() {
        const params = yield* searchParams
        const id = queryInt(params, "id")
        const result = yield* deps.plugins.redrive(id !== undefined ? { id } : { plugin: params.get("plugin") ?? undefined })
        return json(result)
      }))
    )

    // -- read models (per tenant) -----------------------------------------------------------------
    const page = (params: URLSearchParams) => ({ limit: queryInt(params, "limit"), after: params.get("after") ?? undefined })
    yield* router.add(
      "GET",
      "/admin/tenants/:appId/:businessId/products",
      admin(Effect.gen(function*() {
        const t = yield* existing
        const params = yield* searchParams
        return json(yield* deps.readModels.products(t, { ...page(params), search: params.get("search") ?? undefined }))
      }))
    )
    yield* router.add(
      "GET",
      "/admin/tenants/:appId/:businessId/products/:id",
      admin(Effect.gen(function*() {
        const t = yield* existing
        const id = (yield* HttpRouter.params)["id"] ?? ""
        const p = yield* deps.readModels.product(t, id)
        return Option.isSome(p) ? json(p.value) : problem(404, `no product ${id}`)
      }))
    )
    yield* router.add(
      "GET",
      "/admin/tenants/:appId/:businessId/inventory",
      admin(Effect.gen(function*() {
        const t = yield* existing
        const params = yield* searchParams
        return json({ items: yield* deps.readModels.inventory(t, params.get("productId") ?? undefined) })
      }))
    )
    yield* router.add(
      "GET",
      "/admin/tenants/:appId/:businessId/orders",
      admin(Effect.gen(function*() {
        const t = yield* existing
        const params = yield* searchParams
        return json(yield* deps.readModels.orders(t, { ...page(params), status: params.get("status") ?? undefined, appOrderId: params.get("appOrderId") ?? undefined }))
      }))
    )
    yield* router.add(
      "GET",
      "/admin/tenants/:appId/:businessId/orders/:id",
      admin(Effect.gen(function*() {
        const t = yield* existing
        const id = (yield* HttpRouter.params)["id"] ?? ""
        const o = yield* deps.readModels.order(t, id)
        return Option.isSome(o) ? json(o.value) : problem(404, `no order ${id}`)
      }))
    )
    yield* router.add(
      "GET",
      "/admin/tenants/:appId/:businessId/payments",
      admin(Effect.gen(function*() {
        const t = yield* existing
        const params = yield* searchParams
        return json(yield* deps.readModels.payments(t, { ...page(params), orderId: params.get("orderId") ?? undefined }))
      }))
    )
    yield* router.add(
      "GET",
      "/admin/tenants/:appId/:businessId/documents/:kind",
      admin(Effect.gen(function*() {
        const t = yield* existing
        const kind = (yield* HttpRouter.params)["kind"] ?? ""
        return json(yield* deps.readModels.documents(t, kind, page(yield* searchParams)))
      }))
    )
    return router
  })
