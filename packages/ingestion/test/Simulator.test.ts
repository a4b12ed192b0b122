/**
 * Deliveries from the simulator's webhook sender (its retries, timeouts and faults) into the
 * receiver, over real HTTP, checked against the SQLite log and the sender's delivery log.
 */
import { assert, layer } from "@effect/vitest"
import { EventLogError } from "@ocs/event-log"
import { Simulator } from "@ocs/simulator"
import { Effect, Layer } from "effect"
import { decisionsOf, receiverLayer, recordsOf, TestReceiver, wrapAppend } from "./helpers.ts"

const VERIFY = "sim-verify-token"

/** The log in front of the real one: fail or slow down the next append, once. */
const control = { next: "pass" as "pass" | "fail" | "slow", slowDone: Promise.resolve() }

const env = Layer.mergeAll(
  receiverLayer({}, {
    wrapLog: (log) => wrapAppend(log, (batch) => {
        const mode = control.next
        control.next = "pass"
        if (mode === "fail") {
          return Effect.fail(new EventLogError.SqliteError({ filename: "x", operation: "append", message: "disk full", cause: null }))
        }
        if (mode === "slow") {
          // Longer than the sender's timeout: it gives up and delivers again meanwhile.
          const slow = Effect.andThen(Effect.sleep("700 millis"), log.append(batch))
          let done = () => {}
          control.slowDone = new Promise((resolve) => (done = resolve))
          return Effect.ensuring(slow, Effect.sync(done))
        }
        return log.append(batch)
      })
  }),
  Simulator.layer({ port: 0, products: 10, orders: 0, demo: false, webhooks: {
    timeoutMs: 300,
    retryDelaysMs: [50],
    // The refusals below would otherwise make the sender re-check and switch webhooks off (docs/api-catalogue.md, Delivery rules 4).
    degradation: { minSamples: 1000 }
  } })
)

/** A simulator tenant whose webhooks point at the receiver, enabled with a 200. */
const tenant = Effect.gen(function*() {
  const sim = yield* Simulator.Simulator
  const receiver = yield* TestReceiver
  const t = yield* Effect.promise(() => sim.control.createTenant({ products: 10 }))
  const appId = t.app.appId
  const businessId = t.business.businessId
  receiver.apps.set({ appId, verifyTokens: [VERIFY], enabled: true })
  const enabled = yield* Effect.promise(() =>
    sim.control.enableWebhooks(appId, {
      callbackUrl: `${receiver.url}/webhooks/${appId}`,
      verifyToken: VERIFY,
      events: ["productAdd", "productUpdate", "orderAdd", "orderUpdate", "inventoryChange"]
    })
  )
  assert.isTrue(enabled.enabled)
  const control = sim.control
  const drain = Effect.promise(() => control.drainDeliveries(10_000)).pipe(Effect.map(({ idle }) => assert.isTrue(idle)))
  const deliveries = Effect.promise(() => control.deliveries({ appId, limit: 10_000 })).pipe(Effect.map((d) => d.deliveries))
  return { appId, businessId, control, drain, deliveries }
})

layer(env, { excludeTestServices: true, timeout: "60 seconds" })("deliveries from the simulator", (it) => {
  it.effect("webhooksEnabled and data events are stored byte for byte as the sender sent them", () =>
    Effect.gen(function*() {
      const t = yield* tenant
      yield* Effect.promise(() => t.control.addOrder(t.businessId, { customerName: "Ada", products: [{ productId: "100002", quantity: 2 }] }))
      yield* Effect.promise(() => t.control.updateProduct(t.businessId, "100001", { price: 12.5 }))
      yield* t.drain
      const records = yield* recordsOf(t.appId)
      const sent = (yield* t.deliveries).filter((d) => d.outcome === "ok")
      assert.deepStrictEqual(records.map((r) => r.type), ["webhooksEnabled", "orderAdd", "productUpdate"])
      // Byte for byte, except the verify token's value (never stored).
      assert.deepStrictEqual(records.map((r) => r.body), sent.map((d) => d.body.replace(`"webhooksVerifyToken":"sim-verify-token"`, `"webhooksVerifyToken":"[redacted]"`)))
      assert.isTrue(records.every((r) => !r.body.includes("sim-verify-token")))
      assert.deepStrictEqual(records.map((r) => r.businessId), [null, t.businessId, t.businessId])
    }))

  it.effect("duplicated deliveries are answered 200 and stored once, with the decisions kept", () =>
    Effect.gen(function*() {
      const t = yield* tenant
      yield* Effect.promise(() => t.control.addFault({ kind: "webhookDuplicate", appId: t.appId, copies: 2, count: 1 }))
      yield* Effect.promise(() => t.control.updateProduct(t.businessId, "100003", { name: "twice" }))
      yield* t.drain
      const sent = (yield* t.deliveries).filter((d) => d.event === "productUpdate")
      // The original and its two copies, each answered 200. On a loaded machine an answer can
      // come later than the sender's timeout: that copy is sent again, one more duplicate.
      const answered = sent.filter((d) => d.outcome === "ok" && d.status === 200)
      assert.strictEqual(answered.length, 3, JSON.stringify(sent.map((d) => [d.outcome, d.status])))
      assert.isTrue(sent.every((d) => (d.outcome === "ok" && d.status === 200) || d.outcome === "timeout"))
      assert.strictEqual((yield* recordsOf(t.appId)).filter((r) => r.type === "productUpdate").length, 1)
      // Every copy that reached the receiver after the first is a decision kept.
      const decisions = (yield* decisionsOf(t.appId)).length
      assert.isTrue(decisions >= 2 && decisions <= sent.length - 1, `${decisions} decisions for ${sent.length} deliveries`)
    }))

  it.effect("reordered deliveries are all stored", () =>
    Effect.gen(function*() {
      const t = yield* tenant
      yield* Effect.promise(() => t.control.addFault({ kind: "webhookReorder", appId: t.appId, count: 1 }))
      yield* Effect.promise(() => t.control.updateProduct(t.businessId, "100004", { name: "first" }))
      yield* Effect.promise(() => t.control.updateProduct(t.businessId, "100005", { name: "second" }))
      yield* t.drain
      const updates = (yield* recordsOf(t.appId)).filter((r) => r.type === "productUpdate")
      assert.strictEqual(updates.length, 2)
    }))

  it.effect("a store failure is answered 503; the sender's redelivery is stored", () =>
    Effect.gen(function*() {
      const t = yield* tenant
      control.next = "fail"
      yield* Effect.promise(() => t.control.updateProduct(t.businessId, "100006", { name: "retry me" }))
      yield* t.drain
      const sent = (yield* t.deliveries).filter((d) => d.event === "productUpdate")
      assert.deepStrictEqual(sent.map((d) => [d.attempt, d.outcome, d.status]), [[1, "status", 503], [2, "ok", 200]])
      assert.strictEqual((yield* recordsOf(t.appId)).filter((r) => r.type === "productUpdate").length, 1)
    }))

  it.effect("a receiver slower than the sender's timeout: the redelivery is a duplicate of the late commit", () =>
    Effect.gen(function*() {
      const t = yield* tenant
      control.next = "slow"
      yield* Effect.promise(() => t.control.updateProduct(t.businessId, "100007", { name: "slow" }))
      yield* t.drain
      yield* Effect.promise(() => control.slowDone)
      const sent = (yield* t.deliveries).filter((d) => d.event === "productUpdate")
      assert.deepStrictEqual(sent.map((d) => [d.attempt, d.outcome]), [[1, "timeout"], [2, "ok"]])
      assert.strictEqual((yield* recordsOf(t.appId)).filter((r) => r.type === "productUpdate").length, 1)
      assert.strictEqual((yield* decisionsOf(t.appId)).length, 1)
    }))

  it.effect("malformed deliveries are refused at every attempt (400, 401, 413) and never stored; dropped ones never arrive", () =>
    Effect.gen(function*() {
      const t = yield* tenant
      const cases = [["nonJson", 400], ["wrongTypes", 400], ["wrongVerifyToken", 401], ["missingFields", 401], ["huge", 413]] as const
      for (const [variant] of cases) {
        yield* Effect.promise(() => t.control.addFault({ kind: "webhookMalformed", appId: t.appId, variant, count: 1 }))
        yield* Effect.promise(() => t.control.updateProduct(t.businessId, "100008", { name: variant }))
        yield* t.drain
      }
      yield* Effect.promise(() => t.control.addFault({ kind: "webhookDrop", appId: t.appId, count: 1 }))
      yield* Effect.promise(() => t.control.updateProduct(t.businessId, "100009", { name: "dropped" }))
      yield* t.drain
      const sent = (yield* t.deliveries).filter((d) => d.event === "productUpdate")
      const byDelivery = new Map<number, Array<readonly [string, number | null]>>()
      for (const d of sent) byDelivery.set(d.deliveryId, [...(byDelivery.get(d.deliveryId) ?? []), [d.outcome, d.status]])
      const attempts = [...byDelivery.values()]
      assert.strictEqual(attempts.length, cases.length + 1)
      for (const [i, [variant, status]] of cases.entries()) {
        // The first try and its 3 redeliveries, all refused with the same answer.
        assert.deepStrictEqual(attempts[i], Array.from({ length: 4 }, () => ["status", status] as const), variant)
      }
      assert.deepStrictEqual(attempts[cases.length], [["dropped", null]])
      assert.strictEqual((yield* recordsOf(t.appId)).filter((r) => r.type === "productUpdate").length, 0)
    }))

  it.effect("huge but exact integers are kept digit for digit", () =>
    Effect.gen(function*() {
      const t = yield* tenant
      yield* Effect.promise(() => t.control.addFault({ kind: "webhookMalformed", appId: t.appId, variant: "hugeNumbers", count: 1 }))
      yield* Effect.promise(() => t.control.updateProduct(t.businessId, "100010", { name: "huge" }))
      yield* t.drain
      const [record] = (yield* recordsOf(t.appId)).filter((r) => r.type === "productUpdate")
      assert.strictEqual(record!.businessId, `1${"0".repeat(400)}`)
      assert.include(record!.body, `"price":-1e400`)
    }))
})
