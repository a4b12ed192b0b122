import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { ReadModels } from "@ocs/read-models"
import { DomainEvent, definePlugin } from "@ocs/plugin-sdk"
import { PluginRuntime } from "@ocs/plugin-runtime"
import { append, files, runtimeLayer, webhookRecord } from "./helpers.ts"

const order = (id: number) => webhookRecord("orderAdd", { info: { id, status: 54 }, channel: { appOrderId: `A-${id}` } })

/** A plugin that records the event ids it handles, into a list owned by the test. */
const recorder = (name: string, seen: Array<string>, options: { readonly delayMillis?: number } = {}) =>
  definePlugin({
    name,
    version: "1.0.0",
    subscribes: ["OrderAdded"],
    handle: (event) =>
      Effect.gen(function*() {
        if (options.delayMillis !== undefined) yield* Effect.sleep(options.delayMillis)
        seen.push(event.id)
      })
  })

const runtime = Effect.gen(function*() {
  return yield* PluginRuntime.PluginRuntime
})

describe("PluginRuntime", () => {
  it.live("a throwing plugin does not stop another; its events are dead-lettered after the retries", () => {
    const f = files()
    const seen: Array<string> = []
    let attempts = 0
    const thrower = definePlugin({
      name: "thrower",
      version: "1.0.0",
      subscribes: ["OrderAdded"],
      retry: { maxAttempts: 3, baseDelayMillis: 5 },
      handle: () =>
        Effect.sync(() => {
          attempts++
          throw new Error("boom")
        })
    })
    return Effect.gen(function*() {
      const rt = yield* runtime
      const offsets = yield* append([order(1), order(2)])
      yield* rt.awaitOffset(offsets[1]!)
      assert.strictEqual(seen.length, 2)
      assert.strictEqual(attempts, 6)
      const letters = yield* rt.deadLetters("thrower")
      assert.strictEqual(letters.length, 2)
      assert.strictEqual(letters[0]!.attempts, 3)
      assert.include(letters[0]!.error, "boom")
      assert.strictEqual(letters[0]!.eventTag, "OrderAdded")
      const metrics = yield* rt.metrics
      const m = metrics.find((x) => x.name === "thrower")!
      assert.strictEqual(m.failures, 6)
      assert.strictEqual(m.deadLetters, 2)
      assert.strictEqual(m.lag, 0)
      assert.strictEqual(metrics.find((x) => x.name === "good")!.handled, 2)
    }).pipe(Effect.provide(runtimeLayer(f, { plugins: [{ plugin: thrower }, { plugin: recorder("good", seen) }] })))
  })

  it.live("a slow plugin does not delay another; the per-event timeout bounds it", () => {
    const f = files()
    const fast: Array<string> = []
    const slow: Array<string> = []
    const sleeper = definePlugin({
      name: "sleeper",
      version: "1.0.0",
      subscribes: ["OrderAdded"],
      timeoutMillis: 300,
      retry: { maxAttempts: 1 },
      handle: (event) => Effect.andThen(Effect.sleep(10_000), Effect.sync(() => slow.push(event.id)))
    })
    return Effect.gen(function*() {
      const rt = yield* runtime
      const started = Date.now()
      const offsets = yield* append([order(1), order(2), order(3)])
      yield* rt.awaitOffset(offsets[2]!, "fast")
      assert.strictEqual(fast.length, 3)
      // Had it waited for the slow one, it would take at least one timeout (300 ms).
      assert.isBelow(Date.now() - started, 300, "the fast plugin waited for the slow one")
      // The slow one times out per event (300 ms each), dead-letters, and moves on.
      yield* rt.awaitOffset(offsets[2]!, "sleeper")
      assert.strictEqual(slow.length, 0)
      const letters = yield* rt.deadLetters("sleeper")
      assert.strictEqual(letters.length, 3)
      assert.include(letters[0]!.error, "300 ms")
    }).pipe(Effect.provide(runtimeLayer(f, { plugins: [{ plugin: sleeper }, { plugin: recorder("fast", fast) }] })))
  })

  it.live("resumes from its checkpoint after a restart: a handled and checkpointed event is not redelivered", () => {
    const f = files()
    const seen: Array<string> = []
    const plugins = [{ plugin: recorder("counter", seen) }]
    return Effect.gen(function*() {
      yield* Effect.scoped(Effect.gen(function*() {
        const rt = yield* runtime
        const offsets = yield* append([order(1), order(2), order(3)])
        yield* rt.awaitOffset(offsets[2]!)
      }).pipe(Effect.provide(runtimeLayer(f, { plugins }))))
      assert.strictEqual(seen.length, 3)
      // Reopen over the same files; one more record arrives.
      yield* Effect.scoped(Effect.gen(function*() {
        const rt = yield* runtime
        const offsets = yield* append([order(4)])
        yield* rt.awaitOffset(offsets[0]!)
        yield* Effect.sleep(100)
        const [m] = yield* rt.metrics
        assert.strictEqual(m!.handled, 1)
        assert.strictEqual(m!.lastOffset, offsets[0])
      }).pipe(Effect.provide(runtimeLayer(f, { plugins }))))
      assert.strictEqual(seen.length, 4)
      assert.strictEqual(new Set(seen).size, 4)
    })
  })

  it.live("dead letters are listable and re-drivable by id or all", () => {
    const f = files()
    let broken = true
    const handled: Array<string> = []
    const flaky = definePlugin({
      name: "flaky",
      version: "1.0.0",
      subscribes: ["OrderAdded", "OrderUpdated"],
      retry: { maxAttempts: 2, baseDelayMillis: 1 },
      handle: (event) => broken ? Effect.fail(new Error(`downstream down for ${event._tag}`)) : Effect.sync(() => handled.push(event.id))
    })
    return Effect.gen(function*() {
      const rt = yield* runtime
      const offsets = yield* append([order(1), webhookRecord("orderUpdate", { info: { id: 1, status: 56 } }), webhookRecord("productAdd", { id: 9 })])
      yield* rt.awaitOffset(offsets[2]!)
      const letters = yield* rt.deadLetters()
      assert.deepStrictEqual(letters.map((l) => l.eventTag), ["OrderAdded", "OrderUpdated"])
      assert.strictEqual(letters[0]!.offset, offsets[0])
      // Still broken: a re-drive fails and counts the attempts.
      const again = yield* rt.redrive({ id: letters[0]!.id })
      assert.deepStrictEqual(again, { succeeded: [], failed: [letters[0]!.id] })
      assert.strictEqual((yield* rt.deadLetters())[0]!.attempts, 4)
      broken = false
      const one = yield* rt.redrive({ id: letters[0]!.id })
      assert.deepStrictEqual(one.succeeded, [letters[0]!.id])
      const rest = yield* rt.redrive({ plugin: "flaky" })
      assert.deepStrictEqual(rest.succeeded, [letters[1]!.id])
      assert.deepStrictEqual(yield* rt.deadLetters(), [])
      assert.deepStrictEqual(handled, letters.map((l) => l.eventId))
      const unknown = yield* Effect.flip(rt.redrive({ plugin: "nope" }))
      assert.strictEqual(unknown._tag, "UnknownPlugin")
    }).pipe(Effect.provide(runtimeLayer(f, { plugins: [{ plugin: flaky }] })))
  })

  it.live("the context: tenant-scoped queries over real read models, a KV store per plugin and tenant, the event id", () => {
    const f = files()
    const notes: Array<string> = []
    const reader = definePlugin({
      name: "reader",
      version: "1.0.0",
      subscribes: ["InventoryChanged"],
      handle: (event: DomainEvent.InventoryChanged, ctx) =>
        Effect.gen(function*() {
          const product = yield* ctx.query.product("7")
          const count = Option.getOrElse(yield* ctx.kv.get("count"), () => 0) as number
          yield* ctx.kv.set("count", count + 1)
          notes.push(`${ctx.tenant.businessId}:${Option.match(product, { onNone: () => "none", onSome: (p) => p.name ?? "" })}:${count + 1}:${ctx.eventId === event.id}`)
        })
    })
    return Effect.gen(function*() {
      const rt = yield* runtime
      const rm = yield* ReadModels.ReadModels
      yield* append([webhookRecord("productAdd", { id: 7, name: "Tea" })])
      yield* rm.catchUp()
      const offsets = yield* append([
        webhookRecord("inventoryChange", [{ id: 7, depots: [{ id: 1, remain: 3, available: 3 }] }]),
        webhookRecord("inventoryChange", [{ id: 7, depots: [{ id: 1, remain: 2, available: 2 }] }]),
        webhookRecord("inventoryChange", [{ id: 7, depots: [{ id: 1, remain: 1, available: 1 }] }], { businessId: "43" })
      ])
      yield* rt.awaitOffset(offsets[2]!)
      // Business 43 cannot see business 42's product, and has its own KV space.
      assert.deepStrictEqual(notes, ["42:Tea:1:true", "42:Tea:2:true", "43:none:1:true"])
      const kv = yield* rt.kv("reader", { appId: "1001", businessId: "42" }).list()
      assert.deepStrictEqual(kv, [{ key: "count", value: 2 }])
    }).pipe(Effect.provide(runtimeLayer(f, { plugins: [{ plugin: reader }] })))
  })
})
