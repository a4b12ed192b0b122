/**
 * The control API's wire format (`/_sim/...`), in one place for both ends: the input schemas
 * the server decodes requests with, and the shapes of its answers. The control client takes
 * its parameter types from the same schemas (their encoded side) and its result types from
 * the same interfaces, so the two cannot drift apart.
 *
 * Answers carry ids as JSON integers (the server writes bigints); the client hands them out as
 * decimal strings. The answer shapes are therefore generic in the id type `I`, string by default.
 */
import { Schema } from "effect"
import { messagesForms } from "./ApiCall.ts"
import { ORDER_STATUSES } from "./Catalog.ts"
import type { FaultInput } from "./Faults.ts"
import { type EventName, eventNames } from "./WebhookEvents.ts"

export type { CallEntry } from "./CallLog.ts"
export type { DeliveryEntry } from "./DeliveryLog.ts"
export type { FaultInput, Scope } from "./Faults.ts"
export type { RateLimitPatch as RateLimitSettings } from "./RateLimits.ts"
export type { EnableResult } from "./Webhooks.ts"
export type { EventName } from "./WebhookEvents.ts"
export type { WebhookPatch as WebhookSettings } from "./WebhookOptions.ts"

// -- inputs --------------------------------------------------------------------------------------

export { Id } from "./Id.ts"
import { Id } from "./Id.ts"

const Count = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000 }))
const Depots = Schema.Array(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)))
const Event = Schema.Literals(eventNames as ReadonlyArray<EventName>)
const Ms = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const Positive = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
const Ratio = Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 }))
/** An order status code (docs/api-catalogue.md §3.2), e.g. 54 new, 59 in transit, 60 success. */
const Status = Schema.Literals(ORDER_STATUSES)
const opt = Schema.optionalKey

export const CreateApp = Schema.Struct({
  appId: opt(Id),
  name: opt(Schema.String),
  verifyToken: opt(Schema.String),
  secretKey: opt(Schema.String)
})
export const EnableWebhooks = Schema.Struct({
  callbackUrl: Schema.String,
  verifyToken: opt(Schema.String),
  events: opt(Schema.Array(Event))
})
export const CreateBusiness = Schema.Struct({
  businessId: opt(Id),
  apiEnabled: opt(Schema.Boolean),
  seed: opt(Schema.Int),
  products: opt(Count),
  orders: opt(Count),
  bills: opt(Count),
  customers: opt(Count),
  depots: opt(Depots),
  bigIds: opt(Schema.Boolean),
  deletedRatio: opt(Ratio),
  historyDays: opt(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3650 }))),
  /** Conversations of each page-service page (default 60). */
  conversationsPerPage: opt(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100_000 })))
})
export const Settings = Schema.Struct({ apiEnabled: Schema.Boolean })
export const AppRef = Schema.Struct({ appId: Id })
export const CreateToken = Schema.Struct({
  appId: Id,
  businessId: Id,
  accessToken: opt(Schema.String),
  version: opt(Schema.String),
  permissions: opt(Schema.Array(Schema.String)),
  depots: opt(Depots),
  expiresInSeconds: opt(Schema.Number),
  /** Unix seconds. */
  expiresAt: opt(Schema.Number)
})
export const TokenRef = Schema.Struct({ accessToken: Schema.String })
export const ProductChanges = Schema.Struct({
  name: opt(Schema.String),
  price: opt(Schema.Finite),
  code: opt(Schema.String),
  barcode: opt(Schema.String)
})
export const InventoryChange = Schema.Struct({ productId: Id, depotId: Schema.Int, quantity: Schema.Int })
export const InventoryChanges = Schema.Struct({ changes: Schema.Array(InventoryChange) })
export const CreateOrder = Schema.Struct({
  appOrderId: opt(Schema.String),
  depotId: opt(Schema.Int),
  status: opt(Status),
  saleChannel: opt(Schema.Int),
  customerName: opt(Schema.String),
  customerMobile: opt(Schema.String),
  products: opt(Schema.Array(Schema.Struct({ productId: Id, quantity: Schema.Int, price: opt(Schema.Finite) })))
})
export const OrderChanges = Schema.Struct({
  status: opt(Status),
  customerName: opt(Schema.String),
  customerMobile: opt(Schema.String)
})
/** Switches of the API's behaviour (`POST /_sim/settings`). */
export const ApiSwitches = Schema.Struct({
  /** Strict mode: refuse what the real service accepts (docs/api-catalogue.md, "Simulator leniency"). */
  strict: opt(Schema.Boolean),
  /** Refuse cursors that are not the issued text (keys reordered), as a strict client test wants. */
  strictCursors: opt(Schema.Boolean),
  /** The form of `messages` in failures (docs/api-catalogue.md §11); "default" as each check words it. */
  messagesForm: opt(Schema.Literals(messagesForms)),
  /** product/add with an appProductId already used: refused, or a second product created. */
  appProductIdDuplicates: opt(Schema.Literals(["refuse", "accept"]))
})
/** `POST /_sim/businesses/:b/products/delete`: several products deleted at once (one productDelete). */
export const ProductIds = Schema.Struct({ ids: Schema.Array(Id) })
/** `POST /_sim/businesses/:b/orders/:id/partial-return`: the lines returned (default: one unit of the first). */
export const PartialReturn = Schema.Struct({
  products: opt(Schema.Array(Schema.Struct({ productId: Id, quantity: Positive })))
})
/** `POST /_sim/businesses/:b/combos/sell`: `quantity` combos sold from `depotId`; its parts' stock goes down. */
export const ComboSale = Schema.Struct({
  comboId: Id,
  depotId: Schema.Int,
  quantity: Positive,
  items: Schema.Array(Schema.Struct({ productId: Id, quantity: Positive }))
})
/** `POST /_sim/businesses/:b/uninstall`: the business removes the app. */
export const Uninstall = Schema.Struct({ appId: Id })
export const RawEvent = Schema.Struct({ businessId: Id, event: Event, data: Schema.Unknown })
export const RateLimitPatch = Schema.Struct({
  enabled: opt(Schema.Boolean),
  limit: opt(Positive),
  windowMs: opt(Ms),
  lockMs: opt(Ms),
  lockGrowthMs: opt(Ms),
  maxLockMs: opt(Ms),
  fractionalSeconds: opt(Schema.Boolean),
  operations: opt(Schema.Record(Schema.String, Schema.Struct({ limit: opt(Positive), windowMs: opt(Ms) })))
})
export const WebhookPatch = Schema.Struct({
  timeoutMs: opt(Ms),
  maxRetries: opt(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 10 }))),
  retryDelaysMs: opt(Schema.Array(Ms)),
  requireHttps: opt(Schema.Boolean),
  reorderHoldMs: opt(Ms),
  degradation: opt(Schema.Struct({
    window: opt(Positive),
    minSamples: opt(Positive),
    below: opt(Ratio),
    ladder: opt(Schema.Array(Schema.Literals(["recheck", "disable", "lock"])))
  }))
})
export const Drain = Schema.Struct({ timeoutMs: opt(Ms) })

export type CreateAppInput = typeof CreateApp.Encoded
export type EnableWebhooksInput = typeof EnableWebhooks.Encoded
export type CreateBusinessInput = typeof CreateBusiness.Encoded
export type CreateTokenInput = typeof CreateToken.Encoded
export type ProductChangesInput = typeof ProductChanges.Encoded
export type InventoryChangeInput = typeof InventoryChange.Encoded
export type CreateOrderInput = typeof CreateOrder.Encoded
export type OrderChangesInput = typeof OrderChanges.Encoded
export type ProductIdsInput = typeof ProductIds.Encoded
export type PartialReturnInput = typeof PartialReturn.Encoded
export type ComboSaleInput = typeof ComboSale.Encoded
export type ApiSwitchesInput = typeof ApiSwitches.Encoded

// -- answers -------------------------------------------------------------------------------------

/** `GET /_sim/demo`, also printed at start. */
export interface DemoInfo {
  readonly appId: string
  readonly businessId: string
  readonly accessToken: string
  readonly verifyToken: string
  /** The demo application's secret key (the grant flow's code exchange). */
  readonly secretKey: string
  readonly posBaseUrl: string
  readonly vpageBaseUrl: string
}

export interface AppInfo<I = string> {
  readonly appId: I
  readonly name: string
  readonly verifyToken: string
  readonly secretKey: string
  readonly locked: boolean
  readonly lockedReason: string | null
  readonly webhooks: {
    readonly status: "enabled" | "off"
    readonly offReason?: string | null
    readonly callbackUrl?: string
    readonly events?: ReadonlyArray<EventName>
    readonly attempts?: number
    readonly successes?: number
    readonly successRate?: number | null
    readonly recentSuccessRate?: number | null
    readonly strikes?: number
    readonly queued?: number
  }
}

export interface BusinessInfo<I = string> {
  readonly businessId: I
  readonly apiEnabled: boolean
  readonly depots: ReadonlyArray<number>
  readonly data: {
    readonly seed: number
    readonly products: number
    readonly orders: number
    readonly bills: number
    readonly customers: number
    readonly bigIds: boolean
    readonly deletedRatio: number
    readonly historyDays: number
    /** Seeded times lie before this instant (unix seconds). */
    readonly epoch: number
  }
  /** Live record counts (only from `GET /_sim/businesses/:id`). */
  readonly counts?: { readonly products: number; readonly orders: number; readonly bills: number; readonly customers: number }
}

export interface TokenInfo<I = string> {
  readonly accessToken: string
  readonly appId: I
  readonly businessId: I
  readonly version: string
  readonly permissions: ReadonlyArray<string>
  readonly depots: ReadonlyArray<number>
  /** Unix seconds. */
  readonly expiresAt: number
  readonly revoked: boolean
}

/** A fault rule as listed: its input, its id, how many firings remain (null: unbounded), how many fired. */
export type Fault = FaultInput & { readonly id: string; readonly remaining: number | null; readonly fired: number }

/** A data change's answer: the record (as the webhook carries it) and how many deliveries were queued. */
export type Changed<K extends string, R = Record<string, unknown>> = { readonly [P in K]: R } & { readonly queued: number }
