/**
 * How the control API shows its entities (the `*Info` shapes of ControlWire.ts), with ids as
 * bigints so they are written as JSON integers.
 */
import type { App, Business, Token } from "./Auth.ts"
import { big } from "./ControlRequest.ts"
import type { AppInfo, BusinessInfo, TokenInfo } from "./ControlWire.ts"
import type { FaultRule } from "./Faults.ts"
import type { World } from "./World.ts"

export const appView = (world: World, a: App): AppInfo<bigint> => {
  const sub = world.webhooks.subscriptions.get(a.appId)
  return {
    appId: big(a.appId),
    name: a.name,
    verifyToken: a.verifyToken,
    secretKey: a.secretKey,
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

/** With `counts`, the live record counts too (they cost a pass over the business's tables). */
export const businessView = (b: Business, counts: boolean): BusinessInfo<bigint> => ({
  businessId: big(b.businessId),
  apiEnabled: b.apiEnabled,
  depots: b.depots,
  data: {
    seed: b.catalog.seed,
    products: b.catalog.products,
    orders: b.catalog.orders,
    bills: b.catalog.bills,
    customers: b.catalog.customers,
    bigIds: b.catalog.bigIds,
    deletedRatio: b.catalog.deletedRatio,
    historyDays: b.catalog.historyDays,
    epoch: Math.floor(b.catalog.epochMs / 1000)
  },
  ...(counts
    ? {
      counts: {
        products: b.data.products.count(),
        orders: b.data.orders.count(),
        bills: b.data.bills.count(),
        customers: b.data.customers.count()
      }
    }
    : {})
})

export const tokenView = (t: Token): TokenInfo<bigint> => ({
  accessToken: t.accessToken,
  appId: big(t.appId),
  businessId: big(t.businessId),
  version: t.version,
  permissions: t.permissions,
  depots: t.depots,
  expiresAt: Math.floor(t.expiresAtMs / 1000),
  revoked: t.revoked
})

export const faultView = (rule: FaultRule) => ({
  id: rule.id,
  ...rule.spec,
  remaining: rule.remaining ?? null,
  fired: rule.fired
})
