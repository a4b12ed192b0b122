/**
 * A small typed client of the control API (`/_sim/...`) for tests and benchmarks of other
 * packages. Promise-based so it fits any test; wrap calls in `Effect.promise` in Effect code.
 *
 * Ids (appId, businessId, product ids, ...) are returned as decimal strings: they may exceed
 * 2^53, and strings compare and print safely. On the wire they are JSON integers; pass them
 * back as strings, numbers or bigints. A non-2xx answer rejects with `SimulatorControlError`.
 */
import * as Json from "@ocs/protocol/Json"
import type { ApiSettings } from "./ApiCall.ts"
import type {
  ApiSwitchesInput,
  AppInfo,
  BusinessInfo,
  CallEntry,
  Changed,
  CreateAppInput,
  CreateBusinessInput,
  CreateOrderInput,
  CreateTokenInput,
  DeliveryEntry,
  DemoInfo,
  EnableResult,
  EnableWebhooksInput,
  EventName,
  Fault,
  FaultInput,
  Id,
  InventoryChangeInput,
  OrderChangesInput,
  ProductChangesInput,
  TokenInfo,
  WebhookSettings
} from "./ControlWire.ts"
import type { RateLimitConfig, RateLimitPatch } from "./RateLimits.ts"
import type { EffectCountInput } from "./ControlEffects.ts"
import type { WriteKind } from "@ocs/protocol/Catalogue"

export type { EffectCountInput }

/** One effect of a write, as `GET /_sim/businesses/:id/effects` lists it (ids as strings). */
export interface EffectEntry {
  readonly kind: WriteKind
  readonly key: string
  readonly id: string
  readonly atMs: number
  /** Whether the caller got the answer ("lost": a lostAnswer fault cut it). */
  readonly answer: "pending" | "answered" | "lost"
}

export interface EffectCounts {
  readonly kind: WriteKind
  /** Effects of this kind in all. */
  readonly total: number
  readonly keys: Readonly<Record<string, number>>
  readonly markers: Readonly<Record<string, number>>
  /** Keys applied more than once, with their counts. */
  readonly duplicates: Readonly<Record<string, number>>
  /** Effects whose answer a lostAnswer fault cut: the caller cannot know they took effect. */
  readonly lost: ReadonlyArray<{ readonly key: string; readonly id: string }>
}

/** A change the service makes without a webhook (fault injection: silent edits and deletes). */
export interface Silent {
  readonly silent?: boolean | undefined
}

const silent = (options: Silent | undefined): string => (options?.silent === true ? "?silent=true" : "")

export class SimulatorControlError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.name = "SimulatorControlError"
    this.status = status
  }
}

// The wire types have one home, ControlWire.ts (shared with the server); re-exported here
// because `SimulatorControlTypes` (this module's types) is how users name them.
export type { ApiSettings, MessagesForm } from "./ApiCall.ts"
export type {
  AppInfo,
  BusinessInfo,
  CallEntry,
  DeliveryEntry,
  DemoInfo as Demo,
  EventName,
  Fault,
  FaultInput,
  Id,
  RateLimitSettings,
  Scope,
  TokenInfo,
  WebhookSettings
} from "./ControlWire.ts"

export interface LogQuery {
  /** Entries with seq greater than this. */
  readonly since?: number
  readonly appId?: Id
  readonly businessId?: Id
  readonly limit?: number
}

type Wire = Record<string, unknown>

const ID_KEYS = new Set(["appId", "businessId", "id", "productId", "orderId"])
/** Keys of id lists: productDelete and orderDelete carry arrays of ids. */
const ID_LIST_KEYS = new Set(["products", "orders"])

/** Turns JSON integer ids into strings (recursively, for the keys that hold ids). */
const stringIds = (value: unknown): any => {
  if (Array.isArray(value)) return value.map(stringIds)
  if (typeof value !== "object" || value === null) return value
  const out: Wire = {}
  for (const [k, v] of Object.entries(value)) {
    out[k] = ID_KEYS.has(k) && (typeof v === "number" || typeof v === "bigint")
      ? String(v)
      : ID_LIST_KEYS.has(k) && Array.isArray(v) && v.every((x) => typeof x === "number" || typeof x === "bigint")
      ? v.map(String)
      : stringIds(v)
  }
  return out
}

/** Ids as JSON integers when they are decimal strings (so the server sees integers). */
const wireId = (id: Id): bigint | number => typeof id === "string" ? BigInt(id) : id

export class SimulatorControl {
  readonly url: string

  constructor(url: string) {
    this.url = url.replace(/\/+$/, "")
  }

  private async request<A>(method: string, path: string, body?: unknown): Promise<A> {
    const res = await fetch(`${this.url}/_sim${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: Json.stringify(body) })
    })
    const text = await res.text()
    const parsed = Json.parse(text)
    if (parsed._tag === "Failure") throw new SimulatorControlError(res.status, `control API answered non-JSON: ${text.slice(0, 200)}`)
    if (!res.ok) {
      const error = (parsed.success as { error?: unknown } | null)?.error
      throw new SimulatorControlError(res.status, `${method} /_sim${path}: ${typeof error === "string" ? error : text}`)
    }
    return stringIds(parsed.success) as A
  }

  private query(q: object): string {
    const params = new URLSearchParams()
    for (const [k, v] of Object.entries(q)) if (v !== undefined) params.set(k, String(v))
    const s = params.toString()
    return s === "" ? "" : `?${s}`
  }

  demo(): Promise<DemoInfo> {
    return this.request("GET", "/demo")
  }
  info(): Promise<Wire> {
    return this.request("GET", "/info")
  }
  reset(): Promise<void> {
    return this.request("POST", "/reset")
  }

  // tenants ----------------------------------------------------------------------------------
  createApp(input: CreateAppInput = {}): Promise<AppInfo> {
    return this.request("POST", "/apps", { ...input, appId: input.appId === undefined ? undefined : wireId(input.appId) })
  }
  app(appId: Id): Promise<AppInfo> {
    return this.request("GET", `/apps/${appId}`)
  }
  removeApp(appId: Id): Promise<void> {
    return this.request("DELETE", `/apps/${appId}`)
  }
  lockApp(appId: Id, reason?: string): Promise<AppInfo> {
    return this.request("POST", `/apps/${appId}/lock`, { reason })
  }
  unlockApp(appId: Id): Promise<AppInfo> {
    return this.request("POST", `/apps/${appId}/unlock`)
  }
  /** Sends webhooksEnabled; `enabled` is true only if the callback answered 200. */
  enableWebhooks(appId: Id, input: EnableWebhooksInput): Promise<EnableResult & { readonly app: AppInfo }> {
    return this.request("POST", `/apps/${appId}/webhooks`, input)
  }
  disableWebhooks(appId: Id): Promise<void> {
    return this.request("DELETE", `/apps/${appId}/webhooks`)
  }
  createBusiness(input: CreateBusinessInput = {}): Promise<BusinessInfo> {
    return this.request("POST", "/businesses", {
      ...input,
      businessId: input.businessId === undefined ? undefined : wireId(input.businessId)
    })
  }
  business(businessId: Id): Promise<BusinessInfo> {
    return this.request("GET", `/businesses/${businessId}`)
  }
  setApiEnabled(businessId: Id, apiEnabled: boolean): Promise<BusinessInfo> {
    return this.request("POST", `/businesses/${businessId}/settings`, { apiEnabled })
  }
  /** The business removes the application: its tokens stop working, deliveries stop. */
  revokeGrant(businessId: Id, appId: Id): Promise<{ readonly revoked: number }> {
    return this.request("POST", `/businesses/${businessId}/revoke`, { appId: wireId(appId) })
  }
  createToken(input: CreateTokenInput): Promise<TokenInfo> {
    return this.request("POST", "/tokens", { ...input, appId: wireId(input.appId), businessId: wireId(input.businessId) })
  }
  expireToken(accessToken: string): Promise<TokenInfo> {
    return this.request("POST", "/tokens/expire", { accessToken })
  }
  revokeToken(accessToken: string): Promise<TokenInfo> {
    return this.request("POST", "/tokens/revoke", { accessToken })
  }
  /** App + business + token in one go. */
  async createTenant(input: Omit<CreateBusinessInput, "businessId" | "apiEnabled" | "depots"> & {
    readonly permissions?: ReadonlyArray<string>
    /** Depots granted to the token (the business has depots 1, 2 and 3 unless `businessDepots`). */
    readonly depots?: ReadonlyArray<number>
    readonly businessDepots?: ReadonlyArray<number>
  } = {}): Promise<{ readonly app: AppInfo; readonly business: BusinessInfo; readonly token: TokenInfo }> {
    const app = await this.createApp()
    const { permissions, depots, businessDepots, ...data } = input
    const business = await this.createBusiness({ ...data, ...(businessDepots === undefined ? {} : { depots: businessDepots }) })
    const token = await this.createToken({
      appId: app.appId,
      businessId: business.businessId,
      ...(permissions === undefined ? {} : { permissions }),
      ...(depots === undefined ? {} : { depots })
    })
    return { app, business, token }
  }

  // data ---------------------------------------------------------------------------------------
  product(businessId: Id, productId: Id): Promise<Wire> {
    return this.request("GET", `/businesses/${businessId}/products/${productId}`)
  }
  /** With `silent`, the change is stored and no webhook is sent (only a pull can find it). */
  updateProduct(businessId: Id, productId: Id, changes: ProductChangesInput, options?: Silent): Promise<Changed<"product">> {
    return this.request("POST", `/businesses/${businessId}/products/${productId}/update${silent(options)}`, changes)
  }
  /** productDelete: the event carries an array of ids. With `silent`, no webhook is sent. */
  deleteProduct(businessId: Id, productId: Id, options?: Silent): Promise<Changed<"products", ReadonlyArray<string>>> {
    return this.request("POST", `/businesses/${businessId}/products/${productId}/delete${silent(options)}`)
  }
  changeInventory(businessId: Id, changes: ReadonlyArray<InventoryChangeInput>, options?: Silent): Promise<Changed<"products", ReadonlyArray<Wire>>> {
    return this.request("POST", `/businesses/${businessId}/inventory${silent(options)}`, {
      changes: changes.map((c) => ({ ...c, productId: wireId(c.productId) }))
    })
  }
  addOrder(businessId: Id, input: CreateOrderInput = {}, options?: Silent): Promise<Changed<"order">> {
    return this.request("POST", `/businesses/${businessId}/orders${silent(options)}`, {
      ...input,
      products: input.products?.map((p) => ({ ...p, productId: wireId(p.productId) }))
    })
  }
  updateOrder(businessId: Id, orderId: Id, changes: OrderChangesInput, options?: Silent): Promise<Changed<"order">> {
    return this.request("POST", `/businesses/${businessId}/orders/${orderId}/update${silent(options)}`, changes)
  }
  /** orderDelete: the event carries an array of ids. With `silent`, no webhook is sent. */
  deleteOrder(businessId: Id, orderId: Id, options?: Silent): Promise<Changed<"orders", ReadonlyArray<string>>> {
    return this.request("POST", `/businesses/${businessId}/orders/${orderId}/delete${silent(options)}`)
  }
  /** Customers and bills have no webhook: their deletion is always silent (only a pull finds it). */
  deleteCustomer(businessId: Id, customerId: Id): Promise<Changed<"customers", ReadonlyArray<string>>> {
    return this.request("POST", `/businesses/${businessId}/customers/${customerId}/delete`)
  }
  deleteBill(businessId: Id, billId: Id): Promise<Changed<"bills", ReadonlyArray<string>>> {
    return this.request("POST", `/businesses/${businessId}/bills/${billId}/delete`)
  }
  /** What the write operations applied to a business, oldest first (optionally of one kind). */
  effects(businessId: Id, kind?: WriteKind): Promise<{ readonly effects: ReadonlyArray<EffectEntry> }> {
    return this.request("GET", `/businesses/${businessId}/effects${this.query({ kind })}`)
  }
  /**
   * Counts the effects of one write kind: by exact key (appOrderId, appProductId, mobile) and
   * by marker (found in a bill's or movement's description), with every key applied twice or more.
   */
  countEffects(businessId: Id, input: EffectCountInput): Promise<EffectCounts> {
    return this.request("POST", `/businesses/${businessId}/effects/count`, input)
  }
  /** One productDelete naming every id (the v3 shape: an array of ids). */
  deleteProducts(businessId: Id, ids: ReadonlyArray<Id>, options?: Silent): Promise<Changed<"products", ReadonlyArray<string>>> {
    return this.request("POST", `/businesses/${businessId}/products/delete${silent(options)}`, { ids: ids.map(wireId) })
  }
  /** orderPartialReturn: the order plus `originalOrder` (default: one unit of its first line returned). */
  partialReturn(businessId: Id, orderId: Id, products?: ReadonlyArray<{ readonly productId: Id; readonly quantity: number }>, options?: Silent): Promise<Changed<"order">> {
    return this.request("POST", `/businesses/${businessId}/orders/${orderId}/partial-return${silent(options)}`, {
      products: products?.map((p) => ({ ...p, productId: wireId(p.productId) }))
    })
  }
  /** A combo sold: one inventoryChange with the combo and each of its parts, every item with its depots. */
  sellCombo(
    businessId: Id,
    sale: { readonly comboId: Id; readonly depotId: number; readonly quantity: number; readonly items: ReadonlyArray<{ readonly productId: Id; readonly quantity: number }> },
    options?: Silent
  ): Promise<Changed<"products", ReadonlyArray<Wire>>> {
    return this.request("POST", `/businesses/${businessId}/combos/sell${silent(options)}`, {
      ...sale,
      comboId: wireId(sale.comboId),
      items: sale.items.map((i) => ({ ...i, productId: wireId(i.productId) }))
    })
  }
  /** The page service: the page's access expires now (its reads answer ERR_PAGE_EXPIRED). */
  expirePage(businessId: Id, pageId: string): Promise<{ readonly pageId: string; readonly expiredAt: number }> {
    return this.request("POST", `/businesses/${businessId}/pages/${pageId}/expire`)
  }
  /** A customer writes to a page service conversation now: its update time moves. */
  sendPageMessage(businessId: Id, conversationId: string): Promise<{ readonly conversationId: string; readonly updatedAt: number; readonly messages: number }> {
    return this.request("POST", `/businesses/${businessId}/conversations/${conversationId}/messages`)
  }
  /** appUninstalled (no data) to the app the business removed. */
  uninstall(businessId: Id, appId: Id): Promise<{ readonly queued: number }> {
    return this.request("POST", `/businesses/${businessId}/uninstall`, { appId: wireId(appId) })
  }
  emitEvent(businessId: Id, event: EventName, data: unknown): Promise<{ readonly queued: number }> {
    return this.request("POST", "/events", { businessId: wireId(businessId), event, data })
  }

  // logs ---------------------------------------------------------------------------------------
  calls(query: LogQuery & { readonly sinceMs?: number; readonly operation?: string; readonly outcome?: string } = {}):
    Promise<{ readonly lastSeq: number; readonly calls: ReadonlyArray<CallEntry> }>
  {
    return this.request("GET", `/calls${this.query(query)}`)
  }
  clearCalls(): Promise<void> {
    return this.request("DELETE", "/calls")
  }
  deliveries(query: LogQuery & { readonly event?: string; readonly outcome?: string } = {}):
    Promise<{ readonly lastSeq: number; readonly deliveries: ReadonlyArray<DeliveryEntry> }>
  {
    return this.request("GET", `/deliveries${this.query(query)}`)
  }
  clearDeliveries(): Promise<void> {
    return this.request("DELETE", "/deliveries")
  }
  /** Waits until no webhook is queued or being sent; `idle` false on timeout. */
  drainDeliveries(timeoutMs = 10_000): Promise<{ readonly idle: boolean }> {
    return this.request("POST", "/deliveries/drain", { timeoutMs })
  }

  // faults and settings ------------------------------------------------------------------------
  addFault(fault: FaultInput): Promise<Fault> {
    const { appId, businessId, ...rest } = fault
    return this.request("POST", "/faults", {
      ...rest,
      ...(appId === undefined ? {} : { appId: wireId(appId) }),
      ...(businessId === undefined ? {} : { businessId: wireId(businessId) })
    })
  }
  faults(): Promise<{ readonly faults: ReadonlyArray<Fault> }> {
    return this.request("GET", "/faults")
  }
  removeFault(id: string): Promise<void> {
    return this.request("DELETE", `/faults/${id}`)
  }
  clearFaults(): Promise<void> {
    return this.request("DELETE", "/faults")
  }
  rateLimits(): Promise<RateLimitConfig & { readonly locks: ReadonlyArray<{ readonly key: string; readonly lockedUntilMs: number }> }> {
    return this.request("GET", "/rate-limits")
  }
  setRateLimits(settings: RateLimitPatch): Promise<RateLimitConfig> {
    return this.request("POST", "/rate-limits", settings)
  }
  resetRateLimits(): Promise<RateLimitConfig> {
    return this.request("POST", "/rate-limits/reset")
  }
  /** The API's switches: strict cursors, the form of `messages`. */
  apiSettings(): Promise<ApiSettings> {
    return this.request("GET", "/settings")
  }
  setApiSettings(settings: ApiSwitchesInput): Promise<ApiSettings> {
    return this.request("POST", "/settings", settings)
  }
  setWebhookOptions(settings: WebhookSettings): Promise<WebhookSettings> {
    return this.request("POST", "/webhook-options", settings)
  }
}
