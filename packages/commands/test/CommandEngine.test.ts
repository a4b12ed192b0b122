import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { EventLog } from "@ocs/event-log"
import { EngineRecordCommands } from "@ocs/protocol"
import { Effect, Layer, Option, Stream } from "effect"
import { CommandEngine } from "../src/CommandEngine.ts"
import * as Ledger from "../src/CommandLedger.ts"
import { engineLayer, tempLog, tenantWithProduct, type Tokens } from "./helpers.ts"

let sim: RunningSimulator
const tokens: Tokens = new Map()
let tenant: { readonly appId: string; readonly businessId: string }
let productId: string

beforeAll(async () => {
  sim = await startSimulator({ port: 0 })
  ;({ tenant, productId } = await tenantWithProduct(sim, tokens, { products: 20 }))
})
afterAll(() => sim.close())

const admin = { type: "admin" } as const
const order = (appOrderId: string) => ({
  channel: { appOrderId },
  shippingAddress: { name: "Lan", mobile: "0912000001" },
  products: [{ id: productId, price: 1000, quantity: 1 }]
})
const count = (kind: "order.add" | "customer.add" | "bill.addRetail", input: { keys?: Array<string>; markers?: Array<string> }) =>
  Effect.promise(() => sim.control.countEffects(tenant.businessId, { kind, ...input }))

describe("CommandEngine", () => {
  it.live("refuses an invalid payload before storing anything, naming each field path", () =>
    Effect.gen(function*() {
      const engine = yield* CommandEngine
      const refused = yield* Effect.flip(engine.submit({
        tenant,
        kind: "order.add",
        payload: { channel: {}, shippingAddress: { name: "" }, products: [{ id: productId, quantity: -1 }], colour: "red" },
        requestedBy: admin,
        idempotencyKey: "bad-1"
      }))
      assert.strictEqual(refused._tag, "InvalidCommand")
      const paths = refused._tag === "InvalidCommand" ? refused.issues.map((i) => i.path) : []
      for (const p of ["payload.channel.appOrderId", "payload.shippingAddress.name", "payload.shippingAddress.mobile", "payload.products.0.price", "payload.products.0.quantity", "payload.colour"]) {
        assert.include(paths, p)
      }
      const unknownKind = yield* Effect.flip(engine.submit({ tenant, kind: "order.delete", payload: {}, requestedBy: admin, idempotencyKey: "bad-2" }))
      assert.strictEqual(unknownKind._tag, "InvalidCommand")
      const log = yield* EventLog.EventLog
      const stored = yield* Stream.runCollect(log.read({ tenant: "all", types: [EngineRecordCommands.COMMAND_TYPE] }))
      assert.strictEqual(stored.length, 0)
    }).pipe(Effect.provide(engineLayer(sim, tempLog(), tokens))))

  it.live("one key: the same payload is the same command, another payload is refused naming it", () =>
    Effect.gen(function*() {
      const engine = yield* CommandEngine
      const first = yield* engine.submit({ tenant, kind: "order.add", payload: order("IDEM-1"), requestedBy: admin, idempotencyKey: "k-1" })
      assert.isTrue(first.created)
      const again = yield* engine.submit({ tenant, kind: "order.add", payload: order("IDEM-1"), requestedBy: admin, idempotencyKey: "k-1" })
      assert.isFalse(again.created)
      assert.strictEqual(again.command.id, first.command.id)
      const other = yield* Effect.flip(engine.submit({ tenant, kind: "order.add", payload: order("IDEM-2"), requestedBy: admin, idempotencyKey: "k-1" }))
      assert.strictEqual(other._tag, "IdempotencyKeyReused")
      assert.strictEqual(other._tag === "IdempotencyKeyReused" ? other.commandId : "", first.command.id)
      // Two requests racing with one key: one command.
      const raced = yield* Effect.all(
        Array.from({ length: 8 }, () => engine.submit({ tenant, kind: "order.add", payload: order("IDEM-3"), requestedBy: admin, idempotencyKey: "k-3" })),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(new Set(raced.map((r) => r.command.id)).size, 1)
      assert.strictEqual(raced.filter((r) => r.created).length, 1)
      const done = yield* engine.outcome(tenant, first.command.id)
      assert.strictEqual(done.state, "confirmed")
      assert.isDefined(done.entityId)
      yield* engine.outcome(tenant, raced[0]!.command.id)
      assert.deepStrictEqual((yield* count("order.add", { keys: ["IDEM-1", "IDEM-2", "IDEM-3"] })).keys, { "IDEM-1": 1, "IDEM-2": 0, "IDEM-3": 1 })
    }).pipe(Effect.provide(engineLayer(sim, tempLog(), tokens))))

  it.live("lost answers after the effect and 5xx before it: every command confirmed, each effect exactly once", () =>
    Effect.gen(function*() {
      yield* Effect.promise(() => sim.control.addFault({ kind: "lostAnswer", operation: "order/add", businessId: tenant.businessId, count: 2 }))
      yield* Effect.promise(() => sim.control.addFault({ kind: "lostAnswer", operation: "customer/add", businessId: tenant.businessId, count: 1 }))
      yield* Effect.promise(() => sim.control.addFault({ kind: "status", status: 503, operation: "customer/add", businessId: tenant.businessId, count: 1 }))
      yield* Effect.promise(() => sim.control.addFault({ kind: "lostAnswer", operation: "bill/addretail", businessId: tenant.businessId, count: 1 }))
      const engine = yield* CommandEngine
      const submitted = yield* Effect.forEach([
        { kind: "order.add", payload: order("LOST-A"), idempotencyKey: "o-a" },
        { kind: "order.add", payload: order("LOST-B"), idempotencyKey: "o-b" },
        { kind: "customer.add", payload: { name: "Minh", mobile: "0987000111" }, idempotencyKey: "c-1" },
        { kind: "customer.add", payload: { name: "Hoa", mobile: "0987000222" }, idempotencyKey: "c-2" },
        { kind: "bill.addRetail", payload: { depotId: 1, products: [{ id: productId, quantity: 1 }] }, idempotencyKey: "b-1" }
      ], (r) => engine.submit({ tenant, requestedBy: admin, ...r }))
      const outcomes = yield* Effect.forEach(submitted, (s) => engine.outcome(tenant, s.command.id), { concurrency: "unbounded" })
      assert.deepStrictEqual(outcomes.map((c) => c.state), ["confirmed", "confirmed", "confirmed", "confirmed", "confirmed"])
      for (const c of outcomes) assert.isDefined(c.entityId, `${c.kind} ${c.idempotencyKey}: ${c.evidence}`)
      assert.isAtLeast(outcomes.filter((c) => c.attempts > 1 || c.reason !== undefined).length, 4, "the faults were hit")
      assert.deepStrictEqual((yield* count("order.add", { keys: ["LOST-A", "LOST-B"] })).keys, { "LOST-A": 1, "LOST-B": 1 })
      assert.deepStrictEqual((yield* count("customer.add", { keys: ["0987000111", "0987000222"] })).keys, { "0987000111": 1, "0987000222": 1 })
      const bill = outcomes[4]!
      assert.isDefined(bill.marker)
      assert.strictEqual((yield* count("bill.addRetail", { markers: [bill.marker!] })).markers[bill.marker!], 1)
    }).pipe(Effect.provide(engineLayer(sim, tempLog(), tokens))), 30_000)

  it.live("a doubt the read-back cannot answer waits for a person: mark done, or retry", () =>
    Effect.gen(function*() {
      const faults = yield* Effect.promise(() => Promise.all([
        sim.control.addFault({ kind: "lostAnswer", operation: "customer/add", businessId: tenant.businessId, count: 2 }),
        sim.control.addFault({ kind: "status", status: 503, operation: "customer/list", businessId: tenant.businessId })
      ]))
      const engine = yield* CommandEngine
      const a = yield* engine.submit({ tenant, kind: "customer.add", payload: { name: "Ba", mobile: "0987000444" }, requestedBy: admin, idempotencyKey: "p-1" })
      const b = yield* engine.submit({ tenant, kind: "customer.add", payload: { name: "Bon", mobile: "0987000555" }, requestedBy: admin, idempotencyKey: "p-2" })
      const [da, db] = yield* Effect.all([engine.outcome(tenant, a.command.id), engine.outcome(tenant, b.command.id)], { concurrency: 2 })
      for (const d of [da, db]) {
        assert.strictEqual(d.state, "inDoubt")
        assert.strictEqual(d.reason?.tag, "ReadBackFailed")
        assert.match(d.evidence ?? "", /customer\/list .*0987000/)
      }
      // Not in doubt: no decision to take.
      const confirmed = (yield* engine.list(tenant, { state: "confirmed" }))[0]
      if (confirmed !== undefined) assert.strictEqual((yield* Effect.flip(engine.retry(tenant, confirmed.id, "admin")))._tag, "NotInDoubt")
      const done = yield* engine.markDone(tenant, da.id, { by: "admin", entityId: "123", note: "seen in the back office" })
      assert.strictEqual(done.state, "confirmed")
      assert.strictEqual(done.entityId, "123")
      yield* Effect.promise(() => sim.control.removeFault(faults[1].id))
      yield* engine.retry(tenant, db.id, "admin")
      const retried = yield* engine.outcome(tenant, db.id)
      assert.strictEqual(retried.state, "confirmed")
      assert.strictEqual(retried.attempts, 2)
      // A person's retry sends again (their decision); the customer exists.
      assert.isAtLeast((yield* count("customer.add", { keys: ["0987000555"] })).keys["0987000555"]!, 1)
    }).pipe(Effect.provide(engineLayer(sim, tempLog(), tokens))), 30_000)

  it.live("a crash during an attempt: at start the attempt is in doubt and resolved by reading back, never sent blindly", () => {
    const file = tempLog()
    return Effect.gen(function*() {
      // The log of an engine that died after the request and its first send, with the effect applied.
      yield* Effect.promise(() => sim.control.addFault({ kind: "lostAnswer", operation: "customer/add", businessId: tenant.businessId, count: 1 }))
      const payload = { name: "Tuan", mobile: "0987000333" }
      const answer = yield* Effect.promise(() =>
        fetch(`${sim.posBaseUrl}/v3.0/customer/add?appId=${tenant.appId}&businessId=${tenant.businessId}`, {
          method: "POST",
          headers: { Authorization: tokens.get(`${tenant.appId}:${tenant.businessId}`)!, "Content-Type": "application/json" },
          body: JSON.stringify([payload])
        }).then(() => "answered", () => "lost")
      )
      assert.strictEqual(answer, "lost")
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Ledger.append(tenant, { state: "requested", command: "crashed-1", kind: "customer.add", payload, requestedBy: admin, idempotencyKey: "crash-1", fingerprint: "x" })
        yield* Ledger.append(tenant, { state: "sent", command: "crashed-1", attempt: 1 })
      }).pipe(Effect.provide(engineLayer(sim, file, new Map()).pipe(Layer.orDie))))
      const since = (yield* Effect.promise(() => sim.control.calls({ limit: 1 }))).lastSeq
      const done = yield* Effect.scoped(Effect.gen(function*() {
        const engine = yield* CommandEngine
        return yield* engine.outcome(tenant, "crashed-1")
      }).pipe(Effect.provide(engineLayer(sim, file, tokens))))
      assert.strictEqual(done.state, "confirmed")
      assert.strictEqual(done.attempts, 1, "no second send")
      assert.match(done.evidence ?? "", /found id/)
      const calls = yield* Effect.promise(() => sim.control.calls({ since, limit: 100 }))
      assert.strictEqual(calls.calls.filter((c) => c.operation === "customer/add").length, 0)
      assert.strictEqual((yield* count("customer.add", { keys: ["0987000333"] })).keys["0987000333"], 1)
      const records = yield* Effect.scoped(Effect.flatMap(EventLog.EventLog, (log) => Stream.runCollect(log.read({ tenant: "all", types: [EngineRecordCommands.COMMAND_TYPE] }))).pipe(
        Effect.provide(engineLayer(sim, file, tokens))
      ))
      const states = records.map((r) => Option.getOrThrow(Ledger.transitionOf(r)).state)
      assert.deepStrictEqual(states, ["requested", "sent", "inDoubt", "confirmed"])
    })
  }, 30_000)
})
