/**
 * What every admin route shares: JSON answers, bounded request bodies and query parameters,
 * canonical ids, the admin-key guard and the tenant named by a route's path.
 *
 * A request the server cannot honour is answered 4xx with a message a person can act on; a
 * route fails with an `HttpServerResponse` for those, and `guard` answers it as it is.
 */
import type { ConnectOptions } from "../connect/ConnectRoutes.ts"
import { Clock, Effect, Option, Redacted, Schema } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type { Ingestion } from "@ocs/ingestion"
import { Ids, Json } from "@ocs/protocol"
import type { Sessions } from "../console/Sessions.ts"
import * as SourceThrottle from "../SourceThrottle.ts"
import type { LoopHealthService } from "@ocs/observability/LoopHealth"
import type { ProjectionLagService } from "../../ops/ProjectionLag.ts"
import { safeEqual } from "@ocs/tenant-store/Secrets"
import type { Business, TenantRegistry } from "@ocs/tenant-store/TenantRegistry"

export interface AdminOptions {
  /** Without a key every `/admin` route answers 401. */
  readonly adminKey: Redacted.Redacted<string> | undefined
  /** A tenant without a webhook for this long is shown as silent. */
  readonly silenceAlertMs: number
  /** Admin request bodies larger than this are answered 413 (default 64 KiB). */
  readonly maxBodyBytes?: number | undefined
  readonly ready: () => boolean
  /** What else `/readyz` checks: loops down, projection lag past its bounds. */
  readonly readiness?: Readiness | undefined
  /** The console's sessions: with them, a session cookie stands for the key (see `guard`). */
  readonly sessions?: Sessions | undefined
  /**
   * Wrong admin keys per client address: past the bound that address is answered 429 (even
   * with the right key) until its window ends; other addresses are not affected. Default
   * `keyFailureDefaults`, made by `Admin.routes`.
   */
  readonly keyFailures?: SourceThrottle.SourceThrottle | undefined
  /** The server's sync intervals (`sync` section), for when a resource's next pass is due. */
  readonly syncTimes?: { readonly intervalMs: number; readonly reconcileMs: number } | undefined
  /** The grant flow's routes (`/connect/...`, ../connect/ConnectRoutes.ts); absent: not served. */
  readonly connect?: ConnectOptions | undefined
}

/** 20 wrong admin keys a minute per address, as for the console's sign-in. */
export const keyFailureDefaults: SourceThrottle.Settings = { limit: 20, windowMs: 60_000 }

/** The address of the TCP peer of a request (the admin API believes no forwarding header). */
export const clientAddress = (request: HttpServerRequest.HttpServerRequest): string =>
  Option.getOrElse(request.remoteAddress, () => "")

export interface Readiness {
  readonly loops: LoopHealthService
  readonly lag: ProjectionLagService
  readonly maxLagRecords?: number | undefined
  readonly maxLagSeconds?: number | undefined
  /** The webhook receiver's latest appends (`Ingestion.storeHealth`): failing means not ready. */
  readonly webhookStore?: (() => Ingestion.StoreHealth) | undefined
}

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024

export const json = (body: unknown, status = 200) =>
  HttpServerResponse.text(Json.stringify(body), { status, contentType: "application/json" })

export const problem = (status: number, message: string) => json({ error: message }, status)

/** A route's handler: fails with a response (4xx) or with an error the guard logs (500). */
export type Handler<E> = Effect.Effect<HttpServerResponse.HttpServerResponse, E, HttpServerRequest.HttpServerRequest | HttpRouter.RouteContext>

/**
 * Whether a browser request came from this server's own pages: its `Origin` names the host it
 * was sent to. Browsers send `Origin` on every POST; a request without one is refused.
 */
export const sameOrigin = (request: HttpServerRequest.HttpServerRequest) => {
  const origin = request.headers["origin"]
  const host = request.headers["host"]
  if (typeof origin !== "string" || typeof host !== "string") return false
  try {
    return new URL(origin).host === host
  } catch {
    return false
  }
}

/**
 * Who may use the admin routes: a caller with the admin key (`x-admin-key` or `Authorization:
 * Bearer`), or a console session (docs/architecture.md §4.16). A session may read; it may act
 * (any method but GET and HEAD) only from the same origin and with its CSRF token in
 * `x-csrf-token`. Answers 401 (no credentials) or 403 (a session without the checks).
 */
const authorize = (options: AdminOptions, request: HttpServerRequest.HttpServerRequest, at: number) => {
  const header = request.headers["x-admin-key"] ?? request.headers["authorization"]?.replace(/^Bearer\s+/i, "")
  if (typeof header === "string") {
    // The comparison runs whether or not the source is blocked: the time of an answer says
    // nothing about the key. A blocked source is refused even with the right key, so that a
    // guess cannot be confirmed by the answer while it is blocked.
    const right = options.adminKey !== undefined && safeEqual(header, Redacted.value(options.adminKey))
    const source = clientAddress(request)
    const wait = options.keyFailures?.blockedFor(source, at) ?? 0
    if (wait > 0) return HttpServerResponse.setHeader(problem(429, "too many wrong admin keys from this address: wait"), "retry-after", String(wait))
    if (right) return undefined
    const session = options.adminKey === undefined ? undefined : options.sessions?.fromCookie(request.headers["cookie"], at)
    if (session === undefined) {
      options.keyFailures?.failed(source, at)
      return problem(401, "wrong admin key")
    }
  }
  const session = options.adminKey === undefined ? undefined : options.sessions?.fromCookie(request.headers["cookie"], at)
  if (session === undefined) return problem(401, "admin key required (x-admin-key or Authorization: Bearer)")
  if (request.method === "GET" || request.method === "HEAD") return undefined
  if (!sameOrigin(request)) return problem(403, "cross-origin request refused")
  if (!options.sessions!.csrfValid(session, request.headers["x-csrf-token"])) return problem(403, "missing or wrong CSRF token (x-csrf-token)")
  return undefined
}

/** Runs `handler` only for an authorized caller (see `authorize`). */
export const guard = (options: AdminOptions) => <E>(handler: Handler<E>): Handler<never> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const refused = authorize(options, request, yield* Clock.currentTimeMillis)
    if (refused !== undefined) return refused
    return yield* handler.pipe(
      Effect.catch((e: unknown) =>
        HttpServerResponse.isHttpServerResponse(e)
          ? Effect.succeed(e)
          // The message of an internal failure stays in the log: it may name files or keys.
          : Effect.logError("admin request failed", e).pipe(Effect.as(problem(500, "internal error; see the server log")))
      )
    )
  })

/** Reads at most `maxBytes` of the body, parses it losslessly and decodes it with `schema`. */
export const body = <A>(schema: Schema.Decoder<A>, maxBytes: number) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const declared = request.headers["content-length"]
    if (declared !== undefined && (!/^\d+$/.test(declared) || Number(declared) > maxBytes)) {
      return yield* Effect.fail(problem(413, `request body larger than ${maxBytes} bytes`))
    }
    const bytes = yield* request.arrayBuffer.pipe(Effect.mapError(() => problem(400, "request body could not be read")))
    if (bytes.byteLength > maxBytes) return yield* Effect.fail(problem(413, `request body larger than ${maxBytes} bytes`))
    const parsed = Json.parse(new TextDecoder().decode(bytes))
    if (parsed._tag === "Failure") return yield* Effect.fail(problem(400, parsed.failure.message))
    return yield* Schema.decodeUnknownEffect(schema)(parsed.success).pipe(
      Effect.mapError((e) => problem(400, `invalid body: ${e.message}`))
    )
  })

/** A positive integer id (appId, businessId) in canonical form, or 400. */
export const canonical = (u: string | number | bigint, what: string) =>
  Effect.suspend(() => {
    const id = Ids.normalize(typeof u === "string" ? u.trim() : u)
    return id === undefined ? Effect.fail(problem(400, `${what} must be a positive integer`)) : Effect.succeed(id as string)
  })

export const searchParams = Effect.map(HttpServerRequest.HttpServerRequest, (r) => new URL(r.url, "http://x").searchParams)

/**
 * An integer query parameter within [min, max]; absent gives `undefined`. Anything else (a
 * fraction, an exponent, a value past the bounds) is answered 400, never clamped in silence.
 */
export const queryInt = (params: URLSearchParams, name: string, bounds: { readonly min: number; readonly max: number }) =>
  Effect.suspend(() => {
    const v = params.get(name)
    if (v === null) return Effect.succeed(undefined)
    const n = /^\d{1,15}$/.test(v) ? Number(v) : Number.NaN
    return Number.isSafeInteger(n) && n >= bounds.min && n <= bounds.max
      ? Effect.succeed(n)
      : Effect.fail(problem(400, `${name} must be an integer from ${bounds.min} to ${bounds.max}, got ${JSON.stringify(v.slice(0, 40))}`))
  })

/** A text query parameter of at most `maxLength` characters. */
export const queryText = (params: URLSearchParams, name: string, maxLength = 200) =>
  Effect.suspend(() => {
    const v = params.get(name)
    if (v === null) return Effect.succeed(undefined)
    return v.length <= maxLength ? Effect.succeed(v) : Effect.fail(problem(400, `${name} is longer than ${maxLength} characters`))
  })

/** A positive integer id query parameter (a depot, a customer), canonical; absent gives `undefined`. */
export const queryId = (params: URLSearchParams, name: string) =>
  Effect.suspend(() => {
    const v = params.get(name)
    if (v === null) return Effect.succeed(undefined)
    const id = v.length <= 40 ? Ids.normalize(v.trim()) : undefined
    return id === undefined
      ? Effect.fail(problem(400, `${name} must be a positive integer, got ${JSON.stringify(v.slice(0, 40))}`))
      : Effect.succeed(id as string)
  })

/** A numeric code query parameter (an order status, a sale channel, a bill type): digits, as text. */
export const queryCode = (params: URLSearchParams, name: string) =>
  Effect.suspend(() => {
    const v = params.get(name)
    if (v === null) return Effect.succeed(undefined)
    return /^\d{1,9}$/.test(v) ? Effect.succeed(String(Number(v))) : Effect.fail(problem(400, `${name} must be a numeric code, got ${JSON.stringify(v.slice(0, 40))}`))
  })

/** `true` or `false`; absent gives `undefined`. */
export const queryBool = (params: URLSearchParams, name: string) =>
  Effect.suspend(() => {
    const v = params.get(name)
    if (v === null) return Effect.succeed(undefined)
    return v === "true" || v === "false" ? Effect.succeed(v === "true") : Effect.fail(problem(400, `${name} must be true or false`))
  })

/** A calendar date `yyyy-mm-dd` that exists; absent gives `undefined`. */
export const queryDay = (params: URLSearchParams, name: string) =>
  Effect.suspend(() => {
    const v = params.get(name)
    if (v === null) return Effect.succeed(undefined)
    const at = /^\d{4}-\d{2}-\d{2}$/.test(v) ? Date.parse(`${v}T00:00:00Z`) : Number.NaN
    // Date.parse rolls 2024-02-30 over to March: the date must read back as given.
    const valid = Number.isFinite(at) && new Date(at).toISOString().startsWith(v)
    return valid ? Effect.succeed(v) : Effect.fail(problem(400, `${name} must be a date yyyy-mm-dd, got ${JSON.stringify(v.slice(0, 40))}`))
  })

/** Epoch milliseconds, from 0 to the year 9999. */
export const queryMillis = (params: URLSearchParams, name: string) => queryInt(params, name, { min: 0, max: 253_402_300_799_999 })

/** A page request: `limit` (1..1000) and the opaque `after` of the previous page. */
export const pageParams = (params: URLSearchParams) =>
  Effect.all({ limit: queryInt(params, "limit", { min: 1, max: 1000 }), after: queryText(params, "after", 400) })

/** A path parameter of at most 200 characters (ids of records, kinds of documents). */
export const pathParam = (name: string) =>
  Effect.flatMap(HttpRouter.params, (params) => {
    const v = params[name] ?? ""
    return v.length <= 200 ? Effect.succeed(v) : Effect.fail(problem(400, `${name} is longer than 200 characters`))
  })

/** The tenant named by `:appId/:businessId` in the path, canonical. */
export const tenantParam = Effect.gen(function*() {
  const params = yield* HttpRouter.params
  const appId = yield* canonical(params["appId"] ?? "", "appId")
  const businessId = yield* canonical(params["businessId"] ?? "", "businessId")
  return { appId, businessId }
})

/** The registered business named by the path, or 404. */
export const existingTenant = (store: TenantRegistry["Service"]) => Effect.gen(function*() {
  const t = yield* tenantParam
  const b = yield* store.business(t.appId, t.businessId)
  if (Option.isNone(b)) return yield* Effect.fail(problem(404, `no tenant ${t.appId}:${t.businessId}`))
  return b.value
})

const DAY = 24 * 3600 * 1000

/** Parses `YYYY-MM-DD...` or epoch ms; null when absent. */
export const parseDate = (value: string | undefined): number | null => {
  if (value === undefined) return null
  const n = /^\d+$/.test(value) ? Number(value) : Date.parse(value)
  if (!Number.isFinite(n)) throw new Error(`not a date: ${value}`)
  return n
}

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

export const now = Clock.currentTimeMillis
