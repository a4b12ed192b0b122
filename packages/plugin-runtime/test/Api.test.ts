/**
 * `ctx.api` against the simulator over real HTTP: a plugin calls the API as the tenant of its
 * event (that tenant's access token, through the transport's rate limiter), and a tenant the
 * runtime has no access for gets ApiUnavailable, never another tenant's token.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Result } from "effect"
import { definePlugin, type DomainEvent } from "@ocs/plugin-sdk"
import { Operation } from "@ocs/protocol"
import { type RunningSimulator, SimulatorControl, startSimulator } from "@ocs/simulator"
import { CommerceClient, RateLimiter, RateLimitStore, TransportEvents } from "@ocs/transport"
import { PluginRuntime } from "@ocs/plugin-runtime"
import { append, files, runtimeLayer, webhookRecord } from "./helpers.ts"

let sim: RunningSimulator
beforeAll(async () => {
  sim = await startSimulator({ port: 0, demo: false })
})
afterAll(async () => {
  await sim.close()
})

const clientLayer = () =>
  CommerceClient.CommerceClient.layer({ posBaseUrl: sim.posBaseUrl, vpageBaseUrl: sim.vpageBaseUrl, maxAttempts: 2, backoffBaseMs: 10 }).pipe(
    Layer.provide(RateLimiter.RateLimiter.layer().pipe(Layer.provide(RateLimitStore.RateLimitStore.layerMemory), Layer.provide(TransportEvents.TransportEvents.layerLog))),
    Layer.provide(TransportEvents.TransportEvents.layerLog),
    Layer.provide(NodeHttpClient.layerUndici)
  )

describe("ctx.api", () => {
  it.live("calls the API as the event's tenant; an unknown tenant gets ApiUnavailable", () =>
    Effect.gen(function*() {
      const control = new SimulatorControl(sim.url)
      const t = yield* Effect.promise(() => control.createTenant({ products: 4 }))
      const appId = String(t.app.appId)
      const businessId = String(t.business.businessId)
      const outcomes: Array<string> = []
      const listed: Array<{ readonly id: string; readonly name: string }> = []
      const lister = definePlugin({
        name: "lister",
        version: "1.0.0",
        subscribes: ["ProductAdded"],
        handle: (_event: DomainEvent.ProductAdded, ctx) =>
          Effect.gen(function*() {
            const result = yield* Effect.result(ctx.api.call(Operation.productList, {}))
            if (Result.isFailure(result)) return outcomes.push(`${ctx.tenant.businessId}:${result.failure._tag}`)
            const products = result.success.data as ReadonlyArray<{ readonly id: unknown; readonly name: unknown }>
            listed.push(...products.map((p) => ({ id: String(p.id), name: String(p.name) })))
            outcomes.push(`${ctx.tenant.businessId}:ok`)
          })
      })
      const f = files()
      const since = Date.now()
      const program = Effect.gen(function*() {
        const rt = yield* PluginRuntime.PluginRuntime
        const offsets = yield* append([
          webhookRecord("productAdd", { id: 1, name: "Tea" }, { appId, businessId }),
          webhookRecord("productAdd", { id: 2, name: "Rice" }, { appId, businessId: "999999" })
        ])
        yield* rt.awaitOffset(offsets[1]!)
      })
      yield* program.pipe(Effect.provide(runtimeLayer(f, {
        plugins: [{ plugin: lister }],
        tenantAccess: (tenant) =>
          Effect.succeed(
            tenant.appId === appId && tenant.businessId === businessId
              ? Option.some(CommerceClient.tenantAccess(appId, businessId, t.token.accessToken))
              : Option.none()
          )
      }).pipe(Layer.provideMerge(clientLayer()))))

      assert.deepStrictEqual(outcomes, [`${businessId}:ok`, "999999:ApiUnavailable"])
      // What the plugin got is the tenant's data in the simulator.
      assert.strictEqual(listed.length, 4)
      for (const p of listed) {
        const stored = (yield* Effect.promise(() => control.product(businessId, p.id))) as { readonly name: unknown }
        assert.strictEqual(p.name, stored.name)
      }
      // The simulator saw exactly one call, for the event's tenant, and answered it.
      const { calls } = yield* Effect.promise(() => control.calls({ sinceMs: since }))
      const mine = calls.filter((c) => c.operation.includes("product"))
      assert.strictEqual(mine.length, 1)
      assert.strictEqual(String(mine[0]!.appId), appId)
      assert.strictEqual(String(mine[0]!.businessId), businessId)
      assert.strictEqual(mine[0]!.status, 200)
    }))
})
