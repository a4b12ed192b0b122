/**
 * Control routes about the simulator itself: health, the demo tenant, info, reset, and the
 * settings a test turns while it runs (faults, rate limits, webhook sender options).
 */
import { Result } from "effect"
import { ApiSwitches, RateLimitPatch, WebhookPatch } from "./ControlWire.ts"
import { big, ControlError, decode } from "./ControlRequest.ts"
import { route, type Route } from "./ControlRouter.ts"
import { faultView } from "./ControlViews.ts"
import { decodeFault } from "./Faults.ts"
import { allPermissions } from "./Operations.ts"
import { defaultRateLimitConfig } from "./RateLimits.ts"
import { eventNames } from "./WebhookEvents.ts"
import { patchWebhookOptions } from "./WebhookOptions.ts"

export const simulator: ReadonlyArray<Route> = [
  route("GET", "/_sim/health", () => ({ ok: true })),
  route("GET", "/_sim/demo", (world) => {
    const demo = world.demoInfo()
    if (demo === undefined) throw new ControlError(404, "the simulator was started without a demo")
    return { ...demo, appId: big(demo.appId), businessId: big(demo.businessId) }
  }),
  route("GET", "/_sim/info", (world) => ({
    url: world.url,
    posBaseUrl: world.posBaseUrl,
    vpageBaseUrl: world.vpageBaseUrl,
    seed: world.seed,
    permissions: allPermissions,
    events: eventNames,
    rateLimit: world.limiter.config,
    webhooks: world.webhooks.options
  })),
  route("GET", "/_sim/settings", (world) => world.env.settings),
  route("POST", "/_sim/settings", (world, req) => {
    const patch = decode(ApiSwitches, req.body)
    if (patch.strict !== undefined) world.env.settings.strict = patch.strict
    if (patch.strictCursors !== undefined) world.env.settings.strictCursors = patch.strictCursors
    if (patch.messagesForm !== undefined) world.env.settings.messagesForm = patch.messagesForm
    if (patch.appProductIdDuplicates !== undefined) world.env.settings.appProductIdDuplicates = patch.appProductIdDuplicates
    return world.env.settings
  }),
  route("POST", "/_sim/reset", (world) => {
    world.reset()
    return { ok: true }
  })
]

export const faults: ReadonlyArray<Route> = [
  route("GET", "/_sim/faults", (world) => ({ faults: world.faults.list().map(faultView) })),
  route("POST", "/_sim/faults", (world, req) => {
    const spec = decodeFault(req.body)
    if (Result.isFailure(spec)) throw new ControlError(400, spec.failure)
    return faultView(world.faults.add(spec.success))
  }),
  route("DELETE", "/_sim/faults", (world) => {
    world.faults.clear()
    return { ok: true }
  }),
  route("DELETE", "/_sim/faults/:id", (world, _req, [id]) => {
    if (!world.faults.remove(id!)) throw new ControlError(404, `no fault ${id}`)
    return { ok: true }
  })
]

export const limits: ReadonlyArray<Route> = [
  route("GET", "/_sim/rate-limits", (world) => ({
    ...world.limiter.config,
    locks: world.limiter.locks(world.now())
  })),
  route("POST", "/_sim/rate-limits", (world, req) => {
    const patch = decode(RateLimitPatch, req.body)
    world.limiter.configure({ ...world.limiter.config, ...patch })
    return world.limiter.config
  }),
  route("POST", "/_sim/rate-limits/reset", (world) => {
    world.limiter.configure({ ...defaultRateLimitConfig, ...world.options.rateLimit })
    return world.limiter.config
  }),
  route("GET", "/_sim/webhook-options", (world) => world.webhooks.options),
  route("POST", "/_sim/webhook-options", (world, req) => {
    world.webhooks.options = patchWebhookOptions(world.webhooks.options, decode(WebhookPatch, req.body))
    return world.webhooks.options
  })
]
