/**
 * Two engines on one log, as two servers sharing a ledger (docs/architecture.md §4.31): each
 * follows the other's records; the owner of the tenant sends; a key asked of both is one
 * command; when the owner stops with an attempt on the wire, the new owner reads it back.
 * The log is one SQLite file both open (the Kafka-mode test runs the same with three servers).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { Context, Effect, Exit, Layer, Option, Scope } from "effect"
import { CommandEngine } from "../src/CommandEngine.ts"
import { CommandOwnership } from "../src/CommandOwnership.ts"
import { engineLayer, tempLog, tenantWithProduct, type Tokens } from "./helpers.ts"

let sim: RunningSimulator
const tokens: Tokens = new Map()
let tenant: { readonly appId: string; readonly businessId: string }
let productId: string
const admin = { type: "admin" } as const

beforeAll(async () => {
  sim = await startSimulator({ port: 0 })
  ;({ tenant, productId } = await tenantWithProduct(sim, tokens, { products: 3, orders: 0 }))
  // A blind second product/add would add a second product: the counts would show it.
  await sim.control.setApiSettings({ appProductIdDuplicates: "accept" })
})
afterAll(() => sim.close())

/** One engine ("server") on the log file, owning the tenant while `owns()` says so. */
const server = (file: string, owns: () => boolean, scope: Scope.Scope) =>
  Effect.map(
    Layer.buildWithScope(
      engineLayer(sim, file, tokens, { settleMs: 200 }, Layer.succeed(CommandOwnership, CommandOwnership.of({ owns: () => owns() })) as never),
      scope
    ),
    (ctx) => Context.get(ctx, CommandEngine)
  )

/** Waits until the engine has followed the command's request (the other's records arrive within a poll of the log). */
const known = (engine: CommandEngine["Service"], id: string) =>
  Effect.gen(function*() {
    while (Option.isNone(yield* engine.get(tenant, id))) yield* Effect.sleep("20 millis")
  })

describe("several engines sharing one ledger", () => {
  it.live("the owner sends what the other was asked; one key asked of both is one command; another payload is refused", () =>
    Effect.gen(function*() {
      const file = tempLog()
      const scope = yield* Scope.make()
      const a = yield* server(file, () => true, scope)
      const b = yield* server(file, () => false, scope)
      // Asked of the engine that does not own the tenant: sent by the owner, its outcome seen by both.
      const asked = yield* b.submit({ tenant, kind: "product.add", payload: { appProductId: "SH-1", name: "Nón lá", price: 45_000 }, requestedBy: admin, idempotencyKey: "sh-1" })
      assert.isTrue(asked.created)
      yield* known(a, asked.command.id)
      const [onA, onB] = yield* Effect.all([a.outcome(tenant, asked.command.id), b.outcome(tenant, asked.command.id)], { concurrency: 2 })
      assert.deepStrictEqual([onA.state, onB.state], ["confirmed", "confirmed"])
      assert.strictEqual(onB.entityId, onA.entityId)
      // One key asked of both at once.
      const bill = { depotId: 1, products: [{ id: productId, quantity: 2 }] }
      const both = yield* Effect.all([a, b].map((e) => e.submit({ tenant, kind: "bill.addRetail", payload: bill, requestedBy: admin, idempotencyKey: "sh-2" })), { concurrency: 2 })
      assert.strictEqual(both[0]!.command.id, both[1]!.command.id)
      assert.deepStrictEqual(both.map((s) => s.created).sort(), [false, true])
      const refused = yield* Effect.flip(b.submit({ tenant, kind: "bill.addRetail", payload: { ...bill, products: [{ id: productId, quantity: 3 }] }, requestedBy: admin, idempotencyKey: "sh-2" }))
      assert.strictEqual(refused._tag, "IdempotencyKeyReused")
      if (refused._tag === "IdempotencyKeyReused") assert.strictEqual(refused.commandId, both[0]!.command.id)
      const done = yield* b.outcome(tenant, both[0]!.command.id)
      assert.strictEqual(done.state, "confirmed")
      // Only the owner cancels (it claims the first send with no race).
      assert.strictEqual((yield* Effect.flip(b.cancel(tenant, done.id, "admin")))._tag, "NotCancellable")
      const counts = yield* Effect.promise(() => sim.control.countEffects(tenant.businessId, { kind: "bill.addRetail", markers: [done.marker!] }))
      assert.strictEqual(counts.markers[done.marker!], 1)
      assert.deepStrictEqual((yield* Effect.promise(() => sim.control.countEffects(tenant.businessId, { kind: "product.add", keys: ["SH-1"] }))).keys, { "SH-1": 1 })
      yield* Scope.close(scope, Exit.void)
    }), 30_000)

  it.live("the owner stops with an attempt on the wire: the next owner reads it back, never sends it blindly", () =>
    Effect.gen(function*() {
      const file = tempLog()
      let aOwns = true
      const scopeA = yield* Scope.make()
      const scopeB = yield* Scope.make()
      const a = yield* server(file, () => aOwns, scopeA)
      const b = yield* server(file, () => !aOwns, scopeB)
      // The bill is applied, then its answer takes 1.5 s: the owner stops before it.
      const slow = yield* Effect.promise(() => sim.control.addFault({ kind: "latency", ms: 1500, phase: "after", operation: "bill/addretail", businessId: tenant.businessId, count: 1 }))
      const asked = yield* a.submit({ tenant, kind: "bill.addRetail", payload: { depotId: 1, products: [{ id: productId, quantity: 5 }] }, requestedBy: admin, idempotencyKey: "sh-3" })
      const sending = () => Effect.map(a.get(tenant, asked.command.id), (c) => Option.isSome(c) && c.value.state === "sending")
      while (!(yield* sending())) yield* Effect.sleep("20 millis")
      yield* Effect.sleep("200 millis")
      yield* Scope.close(scopeA, Exit.void)
      aOwns = false
      const done = yield* b.outcome(tenant, asked.command.id)
      assert.strictEqual(done.state, "confirmed")
      assert.strictEqual(done.confirmedBy, "readBack")
      assert.strictEqual(done.reason?.tag, "Interrupted")
      assert.strictEqual(done.attempts, 1, "no second attempt")
      const counts = yield* Effect.promise(() => sim.control.countEffects(tenant.businessId, { kind: "bill.addRetail", markers: [done.marker!] }))
      assert.strictEqual(counts.markers[done.marker!], 1)
      yield* Effect.promise(() => sim.control.removeFault(slow.id))
      yield* Scope.close(scopeB, Exit.void)
    }), 30_000)
})
