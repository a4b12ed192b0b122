/**
 * Grants in the tenant registry shared through a compacted topic (docs/architecture.md §4.32),
 * two servers on a real broker, each with its own tenants file. A grant made on server A while
 * a token check's write-back of the old token, made on B, waits to be applied on A: the grant
 * stays the last word on both servers. Found on a loaded machine: A's consumer took B's
 * write-back as the newest value, then waited for A's grant write to finish and wrote the old
 * token over it; A answered with the first grant right after granting again.
 *
 * A's file is made slow for the grant's write (one second), so the write-back always arrives
 * while the grant is being written: the window the loaded machine opened by chance.
 */
import { assert, describe, it } from "@effect/vitest"
import { kafkaBrokers, kafkaUnavailable } from "@ocs/kafka-broker/testing"
import { Context, Deferred, Effect, Fiber, Layer, Option, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { makeSealer } from "@ocs/tenant-store/Secrets"
import * as SharedTenants from "@ocs/tenant-store/SharedTenants"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import * as TenantState from "@ocs/tenant-store/TenantState"

const sealer = makeSealer(Buffer.alloc(32, 9))
const topic = `ocs-shared-grants-test-${process.pid}-${Date.now()}`
const APP = "5101"
const BUSINESS = "6101"

/** One server's registry: its own file, shared through the topic; `slow` delays the local write of that token. */
const server = (dir: string, slow?: { readonly token: string; readonly started: Deferred.Deferred<void> }) => {
  const local = TenantState.layer({ filename: Path.join(dir, "tenants.sqlite"), sealer })
  const delayed = Layer.effect(TenantRegistry, Effect.gen(function*() {
    const registry = yield* TenantRegistry
    if (slow === undefined) return registry
    return TenantRegistry.of({
      ...registry,
      upsertBusiness: (input) =>
        input.accessToken === slow.token
          ? Effect.andThen(Effect.andThen(Deferred.succeed(slow.started, undefined), Effect.sleep("1 second")), registry.upsertBusiness(input))
          : registry.upsertBusiness(input)
    })
  })).pipe(Layer.provide(local))
  return SharedTenants.layer({ brokers: kafkaBrokers(), topic, sealer }).pipe(Layer.provide(delayed))
}

const start = (layer: Layer.Layer<TenantRegistry, unknown>) => Effect.map(Layer.build(layer), (context) => Context.get(context, TenantRegistry))

const heldOn = (store: TenantRegistry["Service"]) =>
  Effect.map(store.business(APP, BUSINESS), (b) => Option.map(b, (x) => ({ token: Redacted.value(x.accessToken), grantedAt: x.grantedAt, expiresAt: x.expiresAt })))

const until = <A>(what: string, check: Effect.Effect<A | undefined, unknown>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 300; i++) {
      const found = yield* check
      if (found !== undefined) return found
      yield* Effect.sleep("20 millis")
    }
    return assert.fail(`timed out waiting for ${what}`)
  })

describe.skipIf(kafkaUnavailable())("grants shared by the servers of one cluster", () => {
  it.live("a write-back of the old token waiting while a grant is written never goes over the grant", () =>
    Effect.scoped(Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const a = yield* start(server(Fs.mkdtempSync(Path.join(Os.tmpdir(), "ocs-grants-a-")), { token: "tok_second", started }))
      const b = yield* start(server(Fs.mkdtempSync(Path.join(Os.tmpdir(), "ocs-grants-b-"))))

      const first = 1_790_000_000_000
      yield* a.upsertApp(APP, ["vt"], true, { secretKey: "sk_grants_0123456789abcdef", publicUrl: "https://sync.example.com" })
      yield* a.upsertBusiness({ appId: APP, businessId: BUSINESS, accessToken: "tok_first", permissions: ["product"], depots: ["1"], grantedAt: first, expiresAt: first + 86_400_000 })
      yield* until("the first grant on B", Effect.map(heldOn(b), (h) => Option.isSome(h) && h.value.grantedAt === first ? true : undefined))

      // Granted again on A; its file takes a second to write it.
      const second = first + 60_000
      const granting = yield* Effect.forkChild(a.upsertBusiness({ appId: APP, businessId: BUSINESS, accessToken: "tok_second", permissions: ["product"], depots: ["1"], grantedAt: second, expiresAt: second + 86_400_000 }))
      yield* Deferred.await(started)
      // Meanwhile B's token check writes the old token back with the expiry the service cut.
      yield* b.upsertBusiness({ appId: APP, businessId: BUSINESS, accessToken: "tok_first", permissions: ["product"], depots: ["1"], grantedAt: first, expiresAt: second + 2_000 })
      yield* Fiber.join(granting)

      const expected = { token: "tok_second", grantedAt: second, expiresAt: second + 86_400_000 }
      assert.deepStrictEqual(Option.getOrUndefined(yield* heldOn(a)), expected, "A right after its grant")
      yield* until("the second grant on B", Effect.map(heldOn(b), (h) => Option.isSome(h) && h.value.grantedAt === second ? true : undefined))
      // Past the write-back's arrival on A (it was on the topic before the grant's write ended).
      yield* Effect.sleep("1 second")
      assert.deepStrictEqual(Option.getOrUndefined(yield* heldOn(a)), expected, "A once the write-back arrived")
      assert.deepStrictEqual(Option.getOrUndefined(yield* heldOn(b)), expected, "B")
    })), 120_000)
})
