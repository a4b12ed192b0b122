/**
 * At-least-once events plus idempotent commands give exactly one effect (docs/architecture.md
 * §4.31): a plugin's event handled again (a retry after a failure, a re-drive of its dead
 * letter) sends its command again with the same key, and the engine answers the same command.
 * A plugin may act on another business of the same application (`businessId`), never on one the
 * application is not connected to. Real parts: the runtime, the command engine over the same
 * SQLite log, the simulator over HTTP.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Command, CommandEngine } from "@ocs/commands"
import { PluginRuntime } from "@ocs/plugin-runtime"
import { definePlugin, PluginError } from "@ocs/plugin-sdk"
import { startSimulator } from "@ocs/simulator"
import { CommerceClient, RateLimiter, RateLimitStore, TransportEvents } from "@ocs/transport"
import { Effect, Layer, Option, Schedule } from "effect"
import { append, baseLayer, files, webhookRecord } from "./helpers.ts"

/** The transport to the simulator, its budgets in memory. */
const clientOf = (sim: { readonly posBaseUrl: string; readonly vpageBaseUrl: string }) => {
  const events = TransportEvents.TransportEvents.collect([])
  return CommerceClient.CommerceClient.layer({ posBaseUrl: sim.posBaseUrl, vpageBaseUrl: sim.vpageBaseUrl, timeoutMs: 2000 }).pipe(
    Layer.provideMerge(RateLimiter.RateLimiter.layer({}).pipe(Layer.provide(RateLimitStore.RateLimitStore.layerMemory), Layer.provide(events))),
    Layer.provide(events),
    Layer.provide(NodeHttpClient.layerUndici)
  )
}

/** The runtime's commands as the server adapts the engine: keyed by plugin, event and the plugin's key. */
const engineCommands = (e: CommandEngine.CommandEngineService): PluginRuntime.CommandsHost => ({
  send: (tn, r) =>
    e.submit({ tenant: tn, kind: r.kind, payload: r.payload, requestedBy: { type: "plugin", name: r.plugin }, idempotencyKey: Command.pluginKey(r.plugin, r.eventId, r.key) }).pipe(
      Effect.flatMap(({ command }) => e.outcome(tn, command.id)),
      Effect.map((c) => ({ id: c.id, kind: c.kind, state: c.state, entityId: c.entityId, reason: c.reason })),
      Effect.mapError((err) => new PluginError.CommandRefused({ reason: "Unavailable", issues: [], message: err.message }))
    )
})

describe("plugin commands", () => {
  it.live("a redelivered event (retried, then re-driven from its dead letter) produces no second command and one effect", () =>
    Effect.gen(function*() {
      const sim = yield* Effect.acquireRelease(Effect.promise(() => startSimulator({ port: 0 })), (s) => Effect.promise(() => s.close()))
      const t = yield* Effect.promise(() => sim.control.createTenant({ products: 3, orders: 0 }))
      const tenant = { appId: String(t.app.appId), businessId: String(t.business.businessId) }
      const listed = yield* Effect.promise(() =>
        fetch(`${sim.posBaseUrl}/v3.0/product/list?appId=${tenant.appId}&businessId=${tenant.businessId}`, {
          method: "POST",
          headers: { Authorization: t.token.accessToken, "Content-Type": "application/json" },
          body: JSON.stringify({ paginator: { size: 1 } })
        }).then((r) => r.json() as Promise<{ data: Array<{ id: number }> }>)
      )
      const product = String(listed.data[0]!.id)

      // A retail sale per order: the handler fails after its command on its first two runs.
      let runs = 0
      const outcomes: Array<string> = []
      const plugin = definePlugin({
        name: "sale-recorder",
        version: "1.0.0",
        subscribes: ["OrderAdded"],
        retry: { maxAttempts: 2, baseDelayMillis: 5 },
        handle: (_event, ctx) =>
          Effect.gen(function*() {
            runs++
            const outcome = yield* ctx.commands.send("bill.addRetail", { depotId: 1, products: [{ id: product, quantity: 1 }] }, { key: "sale" })
            outcomes.push(outcome.id)
            if (runs <= 2) return yield* Effect.fail(new Error(`run ${runs}: failed after sending`))
          })
      })

      const f = files()
      const client = clientOf(sim)
      const engine = CommandEngine.CommandEngine.layer({ settleMs: 100 }).pipe(
        Layer.provide(client),
        Layer.provide(Layer.succeed(CommandEngine.CommandTenants, CommandEngine.CommandTenants.of({
          access: () => Effect.succeed(CommerceClient.tenantAccess(tenant.appId, tenant.businessId, t.token.accessToken))
        })))
      )
      const runtime = Layer.unwrap(Effect.map(CommandEngine.CommandEngine, (e) =>
        PluginRuntime.PluginRuntime.layer({
          filename: f.plugins,
          plugins: [{ plugin }],
          commands: engineCommands(e)
        })))
      const stack = Layer.provideMerge(runtime, Layer.provideMerge(engine, baseLayer(f)))

      yield* Effect.gen(function*() {
        const rt = yield* PluginRuntime.PluginRuntime
        const [offset] = yield* append([webhookRecord("orderAdd", { info: { id: 501, status: 54 }, channel: { appOrderId: "A-501" } }, tenant)])
        yield* rt.awaitOffset(offset!, "sale-recorder")
        const letters = yield* rt.deadLetters("sale-recorder")
        assert.strictEqual(letters.length, 1, "two failed runs: dead-lettered")
        yield* rt.redrive({ plugin: "sale-recorder" })
        // The re-drive runs the handler a third time.
        yield* Effect.suspend(() => (runs >= 3 ? Effect.void : Effect.fail("not yet"))).pipe(Effect.retry(Schedule.spaced("50 millis")), Effect.timeout("10 seconds"))
        assert.strictEqual(runs, 3)
        assert.strictEqual(new Set(outcomes).size, 1, "every run was answered with the same command")
        const e = yield* CommandEngine.CommandEngine
        const commands = yield* e.list(tenant, { kind: "bill.addRetail" })
        assert.strictEqual(commands.length, 1)
        assert.strictEqual(commands[0]!.state, "confirmed")
        assert.deepStrictEqual(commands[0]!.requestedBy, { type: "plugin", name: "sale-recorder" })
        const marker = commands[0]!.marker!
        const counts = yield* Effect.promise(() => sim.control.countEffects(tenant.businessId, { kind: "bill.addRetail", markers: [marker] }))
        assert.strictEqual(counts.markers[marker], 1, "one sale in the service")
      }).pipe(Effect.provide(stack))
    }).pipe(Effect.scoped), 30_000)

  it.live("a command to another business of the same application takes effect there; one to a business not connected is refused, nothing stored", () =>
    Effect.gen(function*() {
      const sim = yield* Effect.acquireRelease(Effect.promise(() => startSimulator({ port: 0 })), (s) => Effect.promise(() => s.close()))
      // One application, two businesses (two shops whose stock a plugin keeps equal).
      const app = yield* Effect.promise(() => sim.control.createApp())
      const shops = yield* Effect.promise(() => Promise.all([1, 2].map(async () => {
        const business = await sim.control.createBusiness({ products: 2, orders: 0 })
        const token = await sim.control.createToken({ appId: app.appId, businessId: business.businessId })
        return { appId: String(app.appId), businessId: String(business.businessId), token: token.accessToken }
      })))
      const [a, b] = shops as [typeof shops[0], typeof shops[0]]
      const listed = yield* Effect.promise(() =>
        fetch(`${sim.posBaseUrl}/v3.0/product/list?appId=${b.appId}&businessId=${b.businessId}`, {
          method: "POST",
          headers: { Authorization: b.token, "Content-Type": "application/json" },
          body: JSON.stringify({ paginator: { size: 1 } })
        }).then((r) => r.json() as Promise<{ data: Array<{ id: number }> }>)
      )
      const productOfB = String(listed.data[0]!.id)
      const tokens = new Map(shops.map((s) => [s.businessId, s.token]))
      const access = (t: { readonly appId: string; readonly businessId: string }) =>
        Option.map(Option.fromUndefinedOr(t.appId === a.appId ? tokens.get(t.businessId) : undefined), (token) => CommerceClient.tenantAccess(t.appId, t.businessId, token))

      const refusals: Array<string> = []
      const plugin = definePlugin({
        name: "stock-mirror",
        version: "1.0.0",
        subscribes: ["OrderAdded"],
        handle: (_event, ctx) =>
          Effect.gen(function*() {
            yield* ctx.commands.send("inventory.exportOther", { depotId: 1, products: [{ id: productOfB, quantity: 1 }], description: "bán ở cửa hàng A" }, { key: "mirror", businessId: b.businessId })
            const refused = yield* Effect.flip(ctx.commands.send("inventory.exportOther", { depotId: 1, products: [{ id: productOfB, quantity: 1 }] }, { key: "elsewhere", businessId: "999999999" }))
            refusals.push(refused.message)
          })
      })

      const f = files()
      const client = clientOf(sim)
      const engine = CommandEngine.CommandEngine.layer({ settleMs: 100 }).pipe(
        Layer.provide(client),
        Layer.provide(Layer.succeed(CommandEngine.CommandTenants, CommandEngine.CommandTenants.of({
          access: (t) => Option.match(access(t), { onNone: () => Effect.fail(new Command.NoAccess({ ...t, message: "unknown" })), onSome: Effect.succeed })
        })))
      )
      const runtime = Layer.unwrap(Effect.map(CommandEngine.CommandEngine, (e) =>
        PluginRuntime.PluginRuntime.layer({
          filename: f.plugins,
          plugins: [{ plugin }],
          tenantAccess: (t) => Effect.succeed(access(t)),
          commands: engineCommands(e)
        })))
      const stack = Layer.provideMerge(runtime, Layer.provideMerge(engine, baseLayer(f)))

      yield* Effect.gen(function*() {
        const rt = yield* PluginRuntime.PluginRuntime
        const [offset] = yield* append([webhookRecord("orderAdd", { info: { id: 601, status: 54 }, channel: { appOrderId: "A-601" } }, { appId: a.appId, businessId: a.businessId })])
        yield* rt.awaitOffset(offset!, "stock-mirror")
        const e = yield* CommandEngine.CommandEngine
        const inB = yield* e.list({ appId: b.appId, businessId: b.businessId })
        assert.strictEqual(inB.length, 1)
        assert.strictEqual(inB[0]!.state, "confirmed")
        assert.strictEqual((yield* e.list({ appId: a.appId, businessId: a.businessId })).length, 0, "nothing sent to the event's own business")
        const counts = yield* Effect.promise(() => sim.control.countEffects(b.businessId, { kind: "inventory.exportOther", markers: [inB[0]!.marker!] }))
        assert.strictEqual(counts.markers[inB[0]!.marker!], 1, "one stock movement in business B")
        assert.strictEqual(refusals.length, 1)
        assert.match(refusals[0]!, /not connected to application/)
        assert.strictEqual((yield* e.list({ appId: a.appId, businessId: "999999999" })).length, 0, "nothing stored for it")
      }).pipe(Effect.provide(stack))
    }).pipe(Effect.scoped), 30_000)
})
