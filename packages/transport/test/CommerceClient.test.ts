import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Fiber, Option, Redacted, Stream } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Operation, type Paginator } from "@ocs/protocol"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { CommerceClient, type RawPage, tenantAccess } from "../src/CommerceClient.ts"
import { RateLimiter } from "../src/RateLimiter.ts"
import { RateLimitStore } from "../src/RateLimitStore.ts"
import type { TransportEvent } from "../src/TransportEvents.ts"
import { clientLayer } from "./helpers.ts"

const WINDOW_MS = 3000
const compressed = { "/v3.0/product/list": { requests: 150, windowSeconds: WINDOW_MS / 1000 }, "/v3.0/order/list": { requests: 150, windowSeconds: WINDOW_MS / 1000 } }

let sim: RunningSimulator
beforeAll(async () => {
  sim = await startSimulator({ port: 0, rateLimit: { limit: 150, windowMs: WINDOW_MS, lockMs: 2000, lockGrowthMs: 1000 } })
})
afterAll(async () => {
  await sim.close()
})

const layerFor = (extra: Partial<Parameters<typeof clientLayer>[0]> = {}) =>
  clientLayer({ posBaseUrl: sim.posBaseUrl, vpageBaseUrl: sim.vpageBaseUrl, overrides: compressed, ...extra })

const newTenant = async (products: number, extra: { bigIds?: boolean; permissions?: ReadonlyArray<string> } = {}) => {
  const t = await sim.control.createTenant({ products, orders: 50, ...extra })
  return tenantAccess(t.app.appId, t.business.businessId, t.token.accessToken)
}

const allIds = (pages: ReadonlyArray<RawPage>) => pages.flatMap((p) => p.records.map((r) => String((r as { id: unknown }).id)))

describe("CommerceClient against the simulator", () => {
  it.live("full sync of 20,000 products in a compressed window: 0 ERR_429, 0 calls during a lock", () =>
    Effect.gen(function*() {
      const tenant = yield* Effect.promise(() => newTenant(20_000))
      const since = (yield* Effect.promise(() => sim.control.calls({ limit: 1 }))).lastSeq
      const client = yield* CommerceClient
      const started = Date.now()
      const pages = yield* Stream.runCollect(client.pages(tenant, Operation.productList, { size: 100 }))
      const elapsed = Date.now() - started
      const ids = allIds(pages)
      assert.strictEqual(new Set(ids).size, ids.length, "no record twice")
      const business = yield* Effect.promise(() => sim.control.business(tenant.businessId))
      assert.strictEqual(ids.length, Number((business as { counts?: { products?: number } }).counts?.products ?? ids.length))
      assert.isAtLeast(ids.length, 19_000)
      const { calls } = yield* Effect.promise(() => sim.control.calls({ since, appId: tenant.appId, limit: 100_000 }))
      assert.strictEqual(calls.filter((c) => c.outcome === "ERR_429").length, 0)
      assert.strictEqual(calls.filter((c) => c.locked).length, 0)
      console.log(`20,000 products: ${pages.length} pages, ${calls.length} calls in ${elapsed} ms (150 per ${WINDOW_MS} ms)`)
    }).pipe(Effect.provide(layerFor())), 60_000)

  it.live("a forced 429: nothing for the locked key before unlockedAt; other businesses and URLs go on", () =>
    Effect.gen(function*() {
      const locked = yield* Effect.promise(() => newTenant(3000))
      const otherBusiness = yield* Effect.promise(() => newTenant(3000))
      // The service allows 5 product/list calls per window for every key; the client believes 150.
      yield* Effect.promise(() => sim.control.setRateLimits({ operations: { "product/list": { limit: 5 } } }))
      const events: Array<TransportEvent> = []
      const since = (yield* Effect.promise(() => sim.control.calls({ limit: 1 }))).lastSeq
      const run = Effect.gen(function*() {
        const client = yield* CommerceClient
        const limiter = yield* RateLimiter
        const lockedPages = yield* Effect.forkChild(Stream.runCollect(client.pages(locked, Operation.productList, { size: 20 }).pipe(Stream.take(8))))
        let until = 0
        while (until === 0) {
          const lock = yield* limiter.lockedUntil({ tenant: locked, operation: Operation.productList })
          if (Option.isSome(lock)) until = lock.value
          else yield* Effect.sleep(5)
        }
        // While the key is locked: another URL of the same business, and another business.
        yield* client.call(locked, Operation.orderList, {})
        yield* client.call(otherBusiness, Operation.productList, {})
        const progressedAt = Date.now()
        return { pages: (yield* Fiber.join(lockedPages)).length, until, progressedAt }
      })
      const { pages, until, progressedAt } = yield* run.pipe(
        Effect.provide(layerFor({ events })),
        Effect.ensuring(Effect.promise(() => sim.control.setRateLimits({ operations: {} })))
      )
      assert.strictEqual(pages, 8)
      assert.isBelow(progressedAt, until, "other keys were served during the lock")
      const { calls } = yield* Effect.promise(() => sim.control.calls({ since, limit: 100_000 }))
      const mine = calls.filter((c) => String(c.appId) === locked.appId && c.operation === "product/list")
      const rejected = mine.filter((c) => c.outcome === "ERR_429")
      assert.isAtLeast(rejected.length, 1, "the service did lock the key")
      assert.strictEqual(mine.filter((c) => c.locked).length, 0, "no call arrived while the key was locked")
      const afterLock = mine.filter((c) => c.at > rejected[0]!.at)
      assert.isTrue(afterLock.every((c) => c.at >= until - 250), "the next call waited for unlockedAt")
      assert.isTrue(events.some((e) => e._tag === "LockTaken"))
      assert.isTrue(events.some((e) => e._tag === "LockReleased"))
    }), 60_000)

  it.live("a restart during a lock honours the lock (SQLite store)", () =>
    Effect.gen(function*() {
      const filename = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "ocs-transport-")), "limits.sqlite")
      const store = RateLimitStore.layerSqlite({ filename })
      const tenant = yield* Effect.promise(() => newTenant(500))
      yield* Effect.promise(() => sim.control.setRateLimits({ operations: { "product/list": { limit: 2 } } }))
      const since = (yield* Effect.promise(() => sim.control.calls({ limit: 1 }))).lastSeq
      // First process: runs into the lock, then stops.
      const until = yield* Effect.gen(function*() {
        const client = yield* CommerceClient
        const limiter = yield* RateLimiter
        yield* Effect.forEach([1, 2], () => client.call(tenant, Operation.productList, {}))
        const third = yield* Effect.forkChild(client.call(tenant, Operation.productList, {}))
        for (let i = 0; i < 200; i++) {
          const lock = yield* limiter.lockedUntil({ tenant, operation: Operation.productList })
          if (Option.isSome(lock)) {
            yield* Fiber.interrupt(third)
            return lock.value
          }
          yield* Effect.sleep(10)
        }
        return assert.fail("no lock was taken")
      }).pipe(Effect.provide(layerFor({ store })))
      // Second process, same store: its first call waits for the lock to end.
      yield* Effect.gen(function*() {
        const client = yield* CommerceClient
        yield* client.call(tenant, Operation.productList, {})
      }).pipe(Effect.provide(layerFor({ store })), Effect.ensuring(Effect.promise(() => sim.control.setRateLimits({ operations: {} }))))
      const { calls } = yield* Effect.promise(() => sim.control.calls({ since, appId: tenant.appId, limit: 1000 }))
      const last = calls[calls.length - 1]!
      assert.strictEqual(last.outcome, "ok")
      assert.isAtLeast(last.at, until - 250 /* skew allowance */ - 5)
      assert.strictEqual(calls.filter((c) => c.locked).length, 0)
    }), 60_000)

  it.live("a crash in mid-pagination resumes from the stored cursor: no page skipped, none repeated", () =>
    Effect.gen(function*() {
      const tenant = yield* Effect.promise(() => newTenant(2500, { bigIds: true }))
      const client = yield* CommerceClient
      let stored: Paginator.Cursor | undefined
      const shapes = new Set<string>()
      const firstRun = yield* Stream.runCollect(
        client.pages(tenant, Operation.productList, { size: 50 }).pipe(
          Stream.tap((page) => Effect.sync(() => {
            stored = Option.getOrUndefined(page.next)
            if (stored !== undefined) shapes.add(stored.text.trimStart()[0]!)
          })),
          Stream.take(7) // the process dies here
        )
      )
      const resumed = yield* Stream.runCollect(client.pages(tenant, Operation.productList, { size: 50, cursor: stored }))
      const fresh = yield* Stream.runCollect(client.pages(tenant, Operation.productList, { size: 50 }))
      const stitched = [...allIds(firstRun), ...allIds(resumed)]
      const all = allIds(fresh)
      assert.deepStrictEqual(stitched, all)
      assert.strictEqual(new Set(stitched).size, stitched.length)
      assert.isTrue(all.some((id) => BigInt(id) > 2n ** 53n), "ids beyond 2^53 survive exactly")
      assert.isAtLeast(shapes.size, 2, "cursors changed shape between pages and still went back exactly")
    }).pipe(Effect.provide(layerFor())), 60_000)

  it.live("retries 5xx and resets inside the budget; API errors that cannot succeed return at once", () =>
    Effect.gen(function*() {
      const tenant = yield* Effect.promise(() => newTenant(100))
      const client = yield* CommerceClient
      yield* Effect.promise(() => sim.control.addFault({ kind: "status", status: 503, appId: tenant.appId, count: 2 }))
      const ok = yield* client.call(tenant, Operation.productList, {})
      assert.isTrue(Array.isArray(ok.data))
      yield* Effect.promise(() => sim.control.addFault({ kind: "reset", appId: tenant.appId, count: 1 }))
      assert.isTrue(Array.isArray((yield* client.call(tenant, Operation.productList, {})).data))
      const since = (yield* Effect.promise(() => sim.control.calls({ limit: 1 }))).lastSeq
      const bad = yield* Effect.flip(client.call(tenant, Operation.productList, { paginator: { size: 1000 } }))
      assert.strictEqual(bad._tag, "InvalidFormFields")
      const { calls } = yield* Effect.promise(() => sim.control.calls({ since, appId: tenant.appId }))
      assert.strictEqual(calls.length, 1, "a form error is not retried")
      yield* Effect.promise(() => sim.control.addFault({ kind: "malformed", variant: "nonJson", appId: tenant.appId, count: 1 }))
      assert.strictEqual((yield* Effect.flip(client.call(tenant, Operation.productList, {})))._tag, "MalformedResponse")
      yield* Effect.promise(() => sim.control.expireToken(Redacted.value(tenant.accessToken)))
      assert.strictEqual((yield* Effect.flip(client.call(tenant, Operation.productList, {})))._tag, "InvalidAccessToken")
    }).pipe(Effect.provide(layerFor({ events: [] }))), 60_000)

  it.live("reads failures in every documented form of messages; a Forbidden is not retried, whatever the form", () =>
    Effect.gen(function*() {
      const tenant = yield* Effect.promise(() => newTenant(10, { permissions: ["product"] }))
      const client = yield* CommerceClient
      for (const form of ["string", "array", "object", "default"] as const) {
        yield* Effect.promise(() => sim.control.setApiSettings({ messagesForm: form }))
        const since = (yield* Effect.promise(() => sim.control.calls({ limit: 1 }))).lastSeq
        const forbidden = yield* Effect.flip(client.call(tenant, Operation.orderList, {}))
        assert.strictEqual(forbidden._tag, "Forbidden", form)
        assert.match(forbidden.message, /permission for order/, form)
        const form400 = yield* Effect.flip(client.call(tenant, Operation.productList, { paginator: { size: 1000 } }))
        assert.strictEqual(form400._tag, "InvalidFormFields", form)
        assert.match(form400.message, /paginator\.size/, form)
        if (form400._tag === "InvalidFormFields" && (form === "object" || form === "default")) assert.property(form400.fields, "paginator.size")
        const { calls } = yield* Effect.promise(() => sim.control.calls({ since, appId: tenant.appId }))
        assert.strictEqual(calls.length, 2, `${form}: each failure answered once, never retried`)
      }
    }).pipe(
      Effect.ensuring(Effect.promise(() => sim.control.setApiSettings({ messagesForm: "default" }))),
      Effect.provide(layerFor({ events: [] }))
    ), 60_000)

  it.live("transient failures follow a capped, jittered exponential backoff up to maxAttempts; 429 waits are bounded apart", () =>
    Effect.gen(function*() {
      const events: Array<TransportEvent> = []
      const tenant = yield* Effect.promise(() => newTenant(10))
      yield* Effect.promise(() => sim.control.addFault({ kind: "status", status: 503, appId: tenant.appId, count: 10 }))
      const since = (yield* Effect.promise(() => sim.control.calls({ limit: 1 }))).lastSeq
      const failed = yield* Effect.gen(function*() {
        const client = yield* CommerceClient
        return yield* Effect.flip(client.call(tenant, Operation.productList, {}))
      }).pipe(Effect.provide(layerFor({ events, client: { maxAttempts: 3, backoffBaseMs: 40, backoffMaxMs: 60 } })))
      assert.strictEqual(failed._tag, "ServerError")
      const { calls } = yield* Effect.promise(() => sim.control.calls({ since, appId: tenant.appId }))
      assert.strictEqual(calls.length, 3, "three attempts, no more")
      const retries = events.flatMap((e) => (e._tag === "RetryScheduled" ? [e] : []))
      assert.deepStrictEqual(retries.map((r) => [r.attempt, r.reason]), [[1, "ServerError"], [2, "ServerError"]])
      // Full jitter under the bound: 40 ms for the first retry, 80 capped to 60 for the second.
      assert.isTrue(retries[0]!.delayMs >= 0 && retries[0]!.delayMs <= 40, `first delay ${retries[0]!.delayMs}`)
      assert.isTrue(retries[1]!.delayMs >= 0 && retries[1]!.delayMs <= 60, `second delay ${retries[1]!.delayMs}`)

      // With no 429 waits allowed, the first ERR_429 is returned (after locking the key).
      const limited = yield* Effect.promise(() => newTenant(10))
      yield* Effect.promise(() => sim.control.setRateLimits({ operations: { "product/list": { limit: 1 } } }))
      const lockEvents: Array<TransportEvent> = []
      const rateLimited = yield* Effect.gen(function*() {
        const client = yield* CommerceClient
        yield* client.call(limited, Operation.productList, {})
        return yield* Effect.flip(client.call(limited, Operation.productList, {}))
      }).pipe(
        Effect.provide(layerFor({ events: lockEvents, client: { maxRateLimitedWaits: 0 } })),
        Effect.ensuring(Effect.promise(() => sim.control.setRateLimits({ operations: {} })))
      )
      assert.include(["RateLimited", "ExceededRateLimit"], rateLimited._tag)
      assert.strictEqual(lockEvents.filter((e) => e._tag === "LockTaken").length, 1)
      assert.strictEqual(lockEvents.filter((e) => e._tag === "RetryScheduled").length, 0, "a 429 is not a transient retry")
    }), 30_000)

  it.live("surfaces warnings: the deprecated orderPrivateId filter", () =>
    Effect.gen(function*() {
      const events: Array<TransportEvent> = []
      const tenant = yield* Effect.promise(() => newTenant(10))
      const result = yield* Effect.gen(function*() {
        const client = yield* CommerceClient
        return yield* client.call(tenant, Operation.orderList, { filters: { orderPrivateId: "x-1" } })
      }).pipe(Effect.provide(layerFor({ events })))
      assert.isAtLeast(result.warnings.length, 1)
      assert.deepStrictEqual(result.warnings[0]!.deprecation, { field: "orderPrivateId", replacement: "appOrderId" })
      assert.isTrue(events.some((e) => e._tag === "WarningReceived"))
    }), 30_000)
})

