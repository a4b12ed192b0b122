/**
 * The control API under `/_sim/...` (JSON in and out, ids as JSON integers): tenants,
 * tokens, data changes (which emit webhooks), events, the call and delivery logs, faults,
 * rate-limit settings and reset. Inputs are decoded with Schema; a bad input answers HTTP
 * 400 with `{ "error": "..." }`, an unknown entity 404.
 */
import type * as Http from "node:http"
import * as Json from "@ocs/protocol/Json"
import { Result, Schema } from "effect"
import { type App, type Business, canonicalId } from "./Auth.ts"
import { ORDER_STATUSES, type OrderLine } from "./Catalog.ts"
import { decodeFault } from "./Faults.ts"
import { send } from "./internal/Http.ts"
import { iso } from "./internal/Time.ts"
import { allPermissions } from "./Operations.ts"
import { defaultRateLimitConfig } from "./RateLimits.ts"
import { inventoryView, orderView, paymentView, productView } from "./Views.ts"
import { eventNames, type EventName } from "./Webhooks.ts"
import type { World } from "./World.ts"

class ControlError {
  readonly status: number
  readonly message: string
  constructor(status: number, message: string) {
    this.status = status
    this.message = message
  }
}

const Id = Schema.Union([Schema.String, Schema.Number, Schema.BigInt])
const Count = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000 }))
const Depots = Schema.Array(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)))
const Event = Schema.Literals(eventNames as ReadonlyArray<EventName>)
const Ms = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const opt = Schema.optionalKey

const CreateApp = Schema.Struct({ appId: opt(Id), name: opt(Schema.String), verifyToken: opt(Schema.String) })
const EnableWebhooks = Schema.Struct({
  callbackUrl: Schema.String,
  verifyToken: opt(Schema.String),
  events: opt(Schema.Array(Event))
})
const CreateBusiness = Schema.Struct({
  businessId: opt(Id),
  apiEnabled: opt(Schema.Boolean),
  seed: opt(Schema.Int),
  products: opt(Count),
  orders: opt(Count),
  payments: opt(Count),
  depots: opt(Depots),
  bigIds: opt(Schema.Boolean),
  deletedRatio: opt(Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 })))
})
const Settings = Schema.Struct({ apiEnabled: Schema.Boolean })
const AppRef = Schema.Struct({ appId: Id })
const CreateToken = Schema.Struct({
  appId: Id,
  businessId: Id,
  accessToken: opt(Schema.String),
  version: opt(Schema.String),
  permissions: opt(Schema.Array(Schema.String)),
  depots: opt(Depots),
  expiresInSeconds: opt(Schema.Number),
  expiresAt: opt(Schema.Number)
})
const TokenRef = Schema.Struct({ accessToken: Schema.String })
const ProductChanges = Schema.Struct({
  name: opt(Schema.String),
  price: opt(Schema.Finite),
  code: opt(Schema.String),
  barcode: opt(Schema.String)
})
const InventoryChanges = Schema.Struct({
  changes: Schema.Array(Schema.Struct({ productId: Id, depotId: Schema.Int, quantity: Schema.Int }))
})
const Status = Schema.Literals(ORDER_STATUSES)
const CreateOrder = Schema.Struct({
  appOrderId: opt(Schema.String),
  depotId: opt(Schema.Int),
  status: opt(Status),
  customerName: opt(Schema.String),
  customerMobile: opt(Schema.String),
  products: opt(Schema.Array(Schema.Struct({ productId: Id, quantity: Schema.Int, price: opt(Schema.Finite) })))
})
const OrderChanges = Schema.Struct({
  status: opt(Status),
  customerName: opt(Schema.String),
  customerMobile: opt(Schema.String)
})
const CreatePayment = Schema.Struct({
  orderId: Id,
  amount: opt(Schema.Finite),
  method: opt(Schema.Literals(["bankTransfer", "mobileWallet"]))
})
const RawEvent = Schema.Struct({ businessId: Id, event: Event, data: Schema.Unknown })
const RateLimitPatch = Schema.Struct({
  enabled: opt(Schema.Boolean),
  limit: opt(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  windowMs: opt(Ms),
  lockMs: opt(Ms),
  lockGrowthMs: opt(Ms),
  maxLockMs: opt(Ms),
  fractionalSeconds: opt(Schema.Boolean),
  operations: opt(Schema.Record(
    Schema.String,
    Schema.Struct({ limit: opt(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))), windowMs: opt(Ms) })
  ))
})
const WebhookPatch = Schema.Struct({
  timeoutMs: opt(Ms),
  maxRetries: opt(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 10 }))),
  retryDelaysMs: opt(Schema.Array(Ms)),
  requireHttps: opt(Schema.Boolean),
  reorderHoldMs: opt(Ms),
  degradation: opt(Schema.Struct({
    window: opt(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
    minSamples: opt(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
    below: opt(Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 }))),
    ladder: opt(Schema.Array(Schema.Literals(["recheck", "disable", "lock"])))
  }))
})
const Drain = Schema.Struct({ timeoutMs: opt(Ms) })

const decode = <S extends Schema.Codec<any, any>>(schema: S, input: unknown): S["Type"] => {
  const result = Schema.decodeUnknownResult(schema as Schema.Codec<S["Type"], unknown>)(input ?? {})
  if (Result.isFailure(result)) throw new ControlError(400, result.failure.message)
  return result.success
}

const idOf = (raw: unknown, what: string): string => {
  const id = canonicalId(raw)
  if (id === undefined) throw new ControlError(400, `${what}: expected a positive integer id`)
  return id
}

const big = (id: string) => BigInt(id)

interface Request {
  readonly method: string
  readonly parts: ReadonlyArray<string>
  readonly query: URLSearchParams
  readonly body: unknown
}

type Handler = (world: World, req: Request, params: ReadonlyArray<string>) => unknown | Promise<unknown>

const routes: Array<{ readonly method: string; readonly pattern: ReadonlyArray<string>; readonly handler: Handler }> = []
const route = (method: string, path: string, handler: Handler) =>
  routes.push({ method, pattern: path.split("/").filter(Boolean), handler })

const app = (world: World, raw: string): App => {
  const found = world.registry.apps.get(idOf(raw, "appId"))
  if (found === undefined || found.removed) throw new ControlError(404, `no application ${raw}`)
  return found
}
const business = (world: World, raw: unknown): Business => {
  const found = world.registry.businesses.get(idOf(raw, "businessId"))
  if (found === undefined) throw new ControlError(404, `no business ${String(raw)}`)
  return found
}

const appView = (world: World, a: App) => {
  const sub = world.webhooks.subscriptions.get(a.appId)
  return {
    appId: big(a.appId),
    name: a.name,
    verifyToken: a.verifyToken,
    locked: a.lockedReason !== undefined,
    lockedReason: a.lockedReason ?? null,
    webhooks: sub === undefined ? { status: "off" } : {
      status: sub.status,
      offReason: sub.offReason ?? null,
      callbackUrl: sub.callbackUrl,
      events: sub.events,
      attempts: sub.attempts,
      successes: sub.successes,
      successRate: sub.attempts === 0 ? null : sub.successes / sub.attempts,
      recentSuccessRate: sub.samples.length === 0 ? null : sub.samples.filter(Boolean).length / sub.samples.length,
      strikes: sub.strikes,
      queued: sub.queue.length
    }
  }
}

const businessView = (b: Business, counts: boolean) => ({
  businessId: big(b.businessId),
  apiEnabled: b.apiEnabled,
  depots: b.depots,
  data: {
    seed: b.catalog.seed,
    products: b.catalog.products,
    orders: b.catalog.orders,
    payments: b.catalog.payments,
    bigIds: b.catalog.bigIds,
    deletedRatio: b.catalog.deletedRatio
  },
  ...(counts
    ? {
      counts: {
        products: b.data.products.count(),
        orders: b.data.orders.count(),
        payments: b.data.payments.count()
      }
    }
    : {})
})

const tokenView = (t: { accessToken: string; appId: string; businessId: string; version: string; permissions: ReadonlyArray<string>; depots: ReadonlyArray<number>; expiresAtMs: number; revoked: boolean }) => ({
  accessToken: t.accessToken,
  appId: big(t.appId),
  businessId: big(t.businessId),
  version: t.version,
  permissions: t.permissions,
  depots: t.depots,
  expiresAt: Math.floor(t.expiresAtMs / 1000),
  revoked: t.revoked
})

const int = (q: URLSearchParams, name: string): number | undefined => {
  const v = q.get(name)
  if (v === null) return undefined
  const n = Number(v)
  if (!Number.isFinite(n)) throw new ControlError(400, `${name}: expected a number`)
  return n
}
const str = (q: URLSearchParams, name: string): string | undefined => q.get(name) ?? undefined

// ---------------------------------------------------------------------------------------------

route("GET", "/_sim/health", () => ({ ok: true }))
route("GET", "/_sim/demo", (world) => {
  const demo = world.demoInfo()
  if (demo === undefined) throw new ControlError(404, "the simulator was started without a demo")
  return { ...demo, appId: big(demo.appId), businessId: big(demo.businessId) }
})
route("GET", "/_sim/info", (world) => ({
  url: world.url,
  posBaseUrl: world.posBaseUrl,
  vpageBaseUrl: world.vpageBaseUrl,
  seed: world.seed,
  permissions: allPermissions,
  events: eventNames,
  rateLimit: world.limiter.config,
  webhooks: world.webhooks.options
}))
route("POST", "/_sim/reset", (world) => {
  world.reset()
  return { ok: true }
})

route("POST", "/_sim/apps", (world, req) => {
  const input = decode(CreateApp, req.body)
  const appId = input.appId === undefined ? undefined : idOf(input.appId, "appId")
  if (appId !== undefined && world.registry.apps.get(appId)?.removed === false) {
    throw new ControlError(409, `application ${appId} exists`)
  }
  return appView(world, world.registry.createApp({ appId, name: input.name, verifyToken: input.verifyToken }))
})
route("GET", "/_sim/apps/:appId", (world, _req, [id]) => appView(world, app(world, id!)))
route("DELETE", "/_sim/apps/:appId", (world, _req, [id]) => {
  const a = app(world, id!)
  a.removed = true
  world.webhooks.remove(a.appId)
  return { ok: true }
})
route("POST", "/_sim/apps/:appId/webhooks", async (world, req, [id]) => {
  const a = app(world, id!)
  const input = decode(EnableWebhooks, req.body)
  const problem = world.webhooks.checkUrl(input.callbackUrl)
  if (problem !== undefined) throw new ControlError(400, `callbackUrl: ${problem}`)
  const result = await world.webhooks.enable(a.appId, {
    callbackUrl: input.callbackUrl,
    verifyToken: input.verifyToken ?? a.verifyToken,
    events: input.events ?? eventNames
  })
  return { ...result, app: appView(world, a) }
})
route("DELETE", "/_sim/apps/:appId/webhooks", (world, _req, [id]) => {
  world.webhooks.disable(app(world, id!).appId, "switched off through the control API")
  return { ok: true }
})
route("POST", "/_sim/apps/:appId/unlock", (world, _req, [id]) => {
  const a = app(world, id!)
  a.lockedReason = undefined
  const sub = world.webhooks.subscriptions.get(a.appId)
  if (sub !== undefined) {
    sub.strikes = 0
    sub.samples = []
  }
  return appView(world, a)
})
route("POST", "/_sim/apps/:appId/lock", (world, req, [id]) => {
  const a = app(world, id!)
  const reason = (req.body as { reason?: unknown } | undefined)?.reason
  a.lockedReason = typeof reason === "string" ? reason : "locked through the control API"
  return appView(world, a)
})

route("POST", "/_sim/businesses", (world, req) => {
  const input = decode(CreateBusiness, req.body)
  const businessId = input.businessId === undefined ? undefined : idOf(input.businessId, "businessId")
  if (businessId !== undefined && world.registry.businesses.has(businessId)) {
    throw new ControlError(409, `business ${businessId} exists`)
  }
  const b = world.registry.createBusiness({ businessId, apiEnabled: input.apiEnabled, catalog: world.catalog(input) })
  return businessView(b, false)
})
route("GET", "/_sim/businesses/:businessId", (world, _req, [id]) => businessView(business(world, id), true))
route("POST", "/_sim/businesses/:businessId/settings", (world, req, [id]) => {
  const b = business(world, id)
  b.apiEnabled = decode(Settings, req.body).apiEnabled
  return businessView(b, false)
})
route("POST", "/_sim/businesses/:businessId/revoke", (world, req, [id]) => {
  const b = business(world, id)
  const appId = idOf(decode(AppRef, req.body).appId, "appId")
  return { revoked: world.registry.revokeGrant(appId, b.businessId) }
})

route("POST", "/_sim/tokens", (world, req) => {
  const input = decode(CreateToken, req.body)
  const a = app(world, idOf(input.appId, "appId"))
  const b = business(world, input.businessId)
  const depots = input.depots
  if (depots !== undefined) {
    const unknown = depots.filter((d) => !b.depots.includes(d))
    if (unknown.length > 0) throw new ControlError(400, `depots: the business has no depot ${unknown.join(", ")}`)
  }
  if (input.accessToken !== undefined && world.registry.tokens.has(input.accessToken)) {
    throw new ControlError(409, "accessToken exists")
  }
  const expiresAtMs = input.expiresAt !== undefined
    ? input.expiresAt * 1000
    : input.expiresInSeconds !== undefined
    ? world.now() + input.expiresInSeconds * 1000
    : undefined
  return tokenView(world.grant({
    appId: a.appId,
    business: b,
    accessToken: input.accessToken,
    version: input.version,
    permissions: input.permissions,
    depots,
    expiresAtMs
  }))
})
const token = (world: World, body: unknown) => {
  const t = world.registry.tokens.get(decode(TokenRef, body).accessToken)
  if (t === undefined) throw new ControlError(404, "no such access token")
  return t
}
route("POST", "/_sim/tokens/expire", (world, req) => {
  const t = token(world, req.body)
  t.expiresAtMs = Math.min(t.expiresAtMs, world.now())
  return tokenView(t)
})
route("POST", "/_sim/tokens/revoke", (world, req) => {
  const t = token(world, req.body)
  t.revoked = true
  return tokenView(t)
})

// ---- data changes --------------------------------------------------------------------------

route("GET", "/_sim/businesses/:businessId/products/:id", (world, _req, [bid, pid]) => {
  const product = business(world, bid).data.products.get(big(idOf(pid, "productId")))
  if (product === undefined) throw new ControlError(404, `no product ${pid}`)
  return productView(product)
})
route("POST", "/_sim/businesses/:businessId/products/:id/update", (world, req, [bid, pid]) => {
  const b = business(world, bid)
  const changes = decode(ProductChanges, req.body)
  const product = b.data.updateProduct(big(idOf(pid, "productId")), changes, world.now())
  if (product === undefined) throw new ControlError(404, `no product ${pid}`)
  const view = productView(product)
  return { product: view, queued: world.webhooks.emit(b.businessId, "productUpdate", view) }
})
route("POST", "/_sim/businesses/:businessId/products/:id/delete", (world, _req, [bid, pid]) => {
  const b = business(world, bid)
  const product = b.data.deleteProduct(big(idOf(pid, "productId")))
  if (product === undefined) throw new ControlError(404, `no product ${pid}`)
  const data = { id: product.id, appProductId: product.appProductId, deletedAt: iso(world.now()) }
  return { product: data, queued: world.webhooks.emit(b.businessId, "productDelete", data) }
})
route("POST", "/_sim/businesses/:businessId/inventory", (world, req, [bid]) => {
  const b = business(world, bid)
  const { changes } = decode(InventoryChanges, req.body)
  if (changes.length === 0) throw new ControlError(400, "changes: must not be empty")
  const now = world.now()
  const levels = changes.map((c, i) => {
    if (!b.depots.includes(c.depotId)) throw new ControlError(400, `changes.${i}.depotId: unknown depot ${c.depotId}`)
    const level = b.data.setInventory(big(idOf(c.productId, "productId")), c.depotId, c.quantity, now)
    if (level === undefined) throw new ControlError(404, `changes.${i}.productId: no product ${String(c.productId)}`)
    return inventoryView(level)
  })
  // spec: inventoryChange may carry several products
  const data = { products: levels }
  return { ...data, queued: world.webhooks.emit(b.businessId, "inventoryChange", data) }
})
route("POST", "/_sim/businesses/:businessId/orders", (world, req, [bid]) => {
  const b = business(world, bid)
  const input = decode(CreateOrder, req.body)
  const depotId = input.depotId ?? b.depots[0] ?? 1
  if (!b.depots.includes(depotId)) throw new ControlError(400, `depotId: unknown depot ${depotId}`)
  const lines: Array<OrderLine> = (input.products ?? [{ productId: b.data.products.base, quantity: 1 }]).map((line, i) => {
    const productId = big(idOf(line.productId, `products.${i}.productId`))
    const product = b.data.products.get(productId)
    if (product === undefined && line.price === undefined) throw new ControlError(404, `products.${i}.productId: no product`)
    return { productId, quantity: line.quantity, price: line.price ?? product!.price }
  })
  const n = b.data.orders.positions + 1
  const order = b.data.addOrder({
    appOrderId: input.appOrderId ?? `AO-${n}`,
    status: input.status ?? "new",
    depotId,
    customerName: input.customerName ?? "Walk-in customer",
    customerMobile: input.customerMobile ?? "0900000000",
    products: lines
  }, world.now())
  const view = orderView(order)
  return { order: view, queued: world.webhooks.emit(b.businessId, "orderAdd", view) }
})
route("POST", "/_sim/businesses/:businessId/orders/:id/update", (world, req, [bid, oid]) => {
  const b = business(world, bid)
  const order = b.data.updateOrder(big(idOf(oid, "orderId")), decode(OrderChanges, req.body), world.now())
  if (order === undefined) throw new ControlError(404, `no order ${oid}`)
  const view = orderView(order)
  return { order: view, queued: world.webhooks.emit(b.businessId, "orderUpdate", view) }
})
route("POST", "/_sim/businesses/:businessId/orders/:id/delete", (world, _req, [bid, oid]) => {
  const b = business(world, bid)
  const order = b.data.deleteOrder(big(idOf(oid, "orderId")))
  if (order === undefined) throw new ControlError(404, `no order ${oid}`)
  const data = { id: order.id, appOrderId: order.appOrderId, deletedAt: iso(world.now()) }
  return { order: data, queued: world.webhooks.emit(b.businessId, "orderDelete", data) }
})
route("POST", "/_sim/businesses/:businessId/payments", (world, req, [bid]) => {
  const b = business(world, bid)
  const input = decode(CreatePayment, req.body)
  const orderId = big(idOf(input.orderId, "orderId"))
  const order = b.data.orders.get(orderId)
  if (order === undefined) throw new ControlError(404, `orderId: no order ${orderId}`)
  const payment = b.data.addPayment({
    orderId,
    amount: input.amount ?? order.total,
    method: input.method ?? "bankTransfer"
  }, world.now())
  const view = paymentView(payment)
  return { payment: view, queued: world.webhooks.emit(b.businessId, "paymentReceived", view) }
})
route("POST", "/_sim/events", (world, req) => {
  const input = decode(RawEvent, req.body)
  const b = business(world, input.businessId)
  return { queued: world.webhooks.emit(b.businessId, input.event, input.data) }
})

// ---- logs ----------------------------------------------------------------------------------

route("GET", "/_sim/calls", (world, req) => {
  const q = req.query
  const calls = world.calls.query({
    since: int(q, "since"),
    sinceMs: int(q, "sinceMs"),
    appId: str(q, "appId"),
    businessId: str(q, "businessId"),
    operation: str(q, "operation"),
    outcome: str(q, "outcome"),
    limit: int(q, "limit")
  })
  return { lastSeq: world.calls.lastSeq, calls }
})
route("DELETE", "/_sim/calls", (world) => {
  world.calls.clear()
  return { ok: true }
})
route("GET", "/_sim/deliveries", (world, req) => {
  const q = req.query
  const deliveries = world.webhooks.deliveries({
    since: int(q, "since"),
    appId: str(q, "appId"),
    businessId: str(q, "businessId"),
    event: str(q, "event"),
    outcome: str(q, "outcome"),
    limit: int(q, "limit")
  })
  return { lastSeq: world.webhooks.lastSeq, deliveries }
})
route("DELETE", "/_sim/deliveries", (world) => {
  world.webhooks.clearLog()
  return { ok: true }
})
route("POST", "/_sim/deliveries/drain", async (world, req) => {
  const { timeoutMs } = decode(Drain, req.body)
  return { idle: await world.webhooks.drain(timeoutMs ?? 10_000) }
})

// ---- faults, limits, options ---------------------------------------------------------------

const faultView = (rule: { id: string; spec: unknown; remaining: number | undefined; fired: number }) => ({
  id: rule.id,
  ...(rule.spec as object),
  remaining: rule.remaining ?? null,
  fired: rule.fired
})
route("GET", "/_sim/faults", (world) => ({ faults: world.faults.list().map(faultView) }))
route("POST", "/_sim/faults", (world, req) => {
  const spec = decodeFault(req.body)
  if (Result.isFailure(spec)) throw new ControlError(400, spec.failure)
  return faultView(world.faults.add(spec.success))
})
route("DELETE", "/_sim/faults", (world) => {
  world.faults.clear()
  return { ok: true }
})
route("DELETE", "/_sim/faults/:id", (world, _req, [id]) => {
  if (!world.faults.remove(id!)) throw new ControlError(404, `no fault ${id}`)
  return { ok: true }
})

route("GET", "/_sim/rate-limits", (world) => ({
  ...world.limiter.config,
  locks: world.limiter.locks(world.now())
}))
route("POST", "/_sim/rate-limits", (world, req) => {
  const patch = decode(RateLimitPatch, req.body)
  world.limiter.configure({ ...world.limiter.config, ...patch })
  return world.limiter.config
})
route("POST", "/_sim/rate-limits/reset", (world) => {
  world.limiter.configure({ ...defaultRateLimitConfig, ...world.options.rateLimit })
  return world.limiter.config
})
route("GET", "/_sim/webhook-options", (world) => world.webhooks.options)
route("POST", "/_sim/webhook-options", (world, req) => {
  const patch = decode(WebhookPatch, req.body)
  const current = world.webhooks.options
  world.webhooks.options = { ...current, ...patch, degradation: { ...current.degradation, ...patch.degradation } }
  return world.webhooks.options
})

// ---------------------------------------------------------------------------------------------

const match = (pattern: ReadonlyArray<string>, parts: ReadonlyArray<string>): Array<string> | undefined => {
  if (pattern.length !== parts.length) return undefined
  const params: Array<string> = []
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i]!.startsWith(":")) params.push(decodeURIComponent(parts[i]!))
    else if (pattern[i] !== parts[i]) return undefined
  }
  return params
}

/** Answers one control request. */
export const handle = async (
  world: World,
  req: Http.IncomingMessage,
  res: Http.ServerResponse,
  path: string,
  query: string,
  body: Buffer | undefined
): Promise<void> => {
  const parts = path.split("/").filter(Boolean)
  const method = req.method ?? "GET"
  try {
    let parsedBody: unknown = undefined
    if (body !== undefined && body.length > 0) {
      const parsed = Json.parseBytes(body)
      if (parsed._tag === "Failure") throw new ControlError(400, `body: ${parsed.failure.message}`)
      parsedBody = parsed.success.value
    } else if (body === undefined) throw new ControlError(413, "body too large")
    let allowed: Array<string> = []
    for (const r of routes) {
      const params = match(r.pattern, parts)
      if (params === undefined) continue
      if (r.method !== method) {
        allowed.push(r.method)
        continue
      }
      const result = await r.handler(world, { method, parts, query: new URLSearchParams(query), body: parsedBody }, params)
      return send(res, 200, Json.stringify(result))
    }
    if (allowed.length > 0) throw new ControlError(405, `use ${allowed.join(" or ")}`)
    throw new ControlError(404, `no control route ${method} ${path}`)
  } catch (error) {
    if (error instanceof ControlError) return send(res, error.status, JSON.stringify({ error: error.message }))
    send(res, 500, JSON.stringify({ error: error instanceof Error ? error.message : String(error) }))
  }
}
