/**
 * Control routes for tenants: applications (and their webhook subscription, lock), businesses
 * (settings, the business removing an app) and access tokens.
 */
import {
  AppRef,
  CreateApp,
  CreateBusiness,
  CreateToken,
  EnableWebhooks,
  Settings
} from "./ControlWire.ts"
import { ControlError, decode, findApp, findBusiness, findToken, idOf } from "./ControlRequest.ts"
import { route, type Route } from "./ControlRouter.ts"
import { appView, businessView, tokenView } from "./ControlViews.ts"
import { eventNames } from "./WebhookEvents.ts"

export const apps: ReadonlyArray<Route> = [
  route("POST", "/_sim/apps", (world, req) => {
    const input = decode(CreateApp, req.body)
    const appId = input.appId === undefined ? undefined : idOf(input.appId, "appId")
    if (appId !== undefined && world.registry.apps.get(appId)?.removed === false) {
      throw new ControlError(409, `application ${appId} exists`)
    }
    return appView(world, world.registry.createApp({ appId, name: input.name, verifyToken: input.verifyToken, secretKey: input.secretKey }))
  }),
  route("GET", "/_sim/apps/:appId", (world, _req, [id]) => appView(world, findApp(world, id!))),
  route("DELETE", "/_sim/apps/:appId", (world, _req, [id]) => {
    const a = findApp(world, id!)
    a.removed = true
    world.webhooks.remove(a.appId)
    return { ok: true }
  }),
  route("POST", "/_sim/apps/:appId/webhooks", async (world, req, [id]) => {
    const a = findApp(world, id!)
    const input = decode(EnableWebhooks, req.body)
    const problem = world.webhooks.checkUrl(input.callbackUrl)
    if (problem !== undefined) throw new ControlError(400, `callbackUrl: ${problem}`)
    const result = await world.webhooks.enable(a.appId, {
      callbackUrl: input.callbackUrl,
      verifyToken: input.verifyToken ?? a.verifyToken,
      events: input.events ?? eventNames
    })
    return { ...result, app: appView(world, a) }
  }),
  route("DELETE", "/_sim/apps/:appId/webhooks", (world, _req, [id]) => {
    world.webhooks.disable(findApp(world, id!).appId, "switched off through the control API")
    return { ok: true }
  }),
  route("POST", "/_sim/apps/:appId/unlock", (world, _req, [id]) => {
    const a = findApp(world, id!)
    a.lockedReason = undefined
    const sub = world.webhooks.subscriptions.get(a.appId)
    if (sub !== undefined) {
      sub.strikes = 0
      sub.samples = []
    }
    return appView(world, a)
  }),
  route("POST", "/_sim/apps/:appId/lock", (world, req, [id]) => {
    const a = findApp(world, id!)
    const reason = (req.body as { reason?: unknown } | undefined)?.reason
    a.lockedReason = typeof reason === "string" ? reason : "locked through the control API"
    return appView(world, a)
  })
]

export const businesses: ReadonlyArray<Route> = [
  route("POST", "/_sim/businesses", (world, req) => {
    const input = decode(CreateBusiness, req.body)
    const businessId = input.businessId === undefined ? undefined : idOf(input.businessId, "businessId")
    if (businessId !== undefined && world.registry.businesses.has(businessId)) {
      throw new ControlError(409, `business ${businessId} exists`)
    }
    const b = world.registry.createBusiness({ businessId, apiEnabled: input.apiEnabled, catalog: world.catalog(input) })
    return businessView(b, false)
  }),
  route("GET", "/_sim/businesses/:businessId", (world, _req, [id]) => businessView(findBusiness(world, id), true)),
  route("POST", "/_sim/businesses/:businessId/settings", (world, req, [id]) => {
    const b = findBusiness(world, id)
    b.apiEnabled = decode(Settings, req.body).apiEnabled
    return businessView(b, false)
  }),
  route("POST", "/_sim/businesses/:businessId/revoke", (world, req, [id]) => {
    const b = findBusiness(world, id)
    const appId = idOf(decode(AppRef, req.body).appId, "appId")
    return { revoked: world.registry.revokeGrant(appId, b.businessId) }
  })
]

export const tokens: ReadonlyArray<Route> = [
  route("POST", "/_sim/tokens", (world, req) => {
    const input = decode(CreateToken, req.body)
    const a = findApp(world, idOf(input.appId, "appId"))
    const b = findBusiness(world, input.businessId)
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
  }),
  route("POST", "/_sim/tokens/expire", (world, req) => {
    const t = findToken(world, req.body)
    t.expiresAtMs = Math.min(t.expiresAtMs, world.now())
    return tokenView(t)
  }),
  route("POST", "/_sim/tokens/revoke", (world, req) => {
    const t = findToken(world, req.body)
    t.revoked = true
    return tokenView(t)
  })
]
