import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber, Layer, Option, Queue, Stream } from "effect"
import { TestClock } from "effect/testing"
import { Ids, Operation } from "@ocs/protocol"
import { keyString, RateLimiter, whereOf } from "../src/RateLimiter.ts"
import { makeMemory, RateLimitStore, type RemoteLock } from "../src/RateLimitStore.ts"
import { TransportEvents, type TransportEvent } from "../src/TransportEvents.ts"

const op = { ...Operation.productList, rateLimit: { requests: 4, windowSeconds: 1 } }
const key = { tenant: Ids.makeTenant(1, 2), operation: op }
const other = { tenant: Ids.makeTenant(1, 3), operation: op }

const limiterLayer = (store = makeMemory(), events: Array<TransportEvent> = [], sweepIntervalMs?: number) =>
  RateLimiter.layer({ safetyMargin: 0, skewAllowanceMs: 500, sweepIntervalMs }).pipe(
    Layer.provide(Layer.succeed(RateLimitStore, store)),
    Layer.provide(TransportEvents.collect(events))
  )

describe("RateLimiter", () => {
  it.effect("holds calls beyond the budget until the window frees a slot", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const sent: Array<number> = []
      const fibers = yield* Effect.forEach(Array.from({ length: 6 }, (_, i) => i), (i) =>
        Effect.forkChild(limiter.withPermit(key, "bulk", () => Effect.sync(() => void sent.push(i)))))
      yield* TestClock.adjust(10)
      assert.deepStrictEqual(sent, [0, 1, 2, 3])
      yield* TestClock.adjust(1000)
      assert.deepStrictEqual(sent, [0, 1, 2, 3, 4, 5])
      yield* Effect.forEach(fibers, Fiber.join)
    }).pipe(Effect.provide(limiterLayer())))

  it.effect("an interrupted waiter spends no budget", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      // Fill the window.
      yield* Effect.forEach([1, 2, 3, 4], () => limiter.withPermit(key, "bulk", () => Effect.void))
      const waiting = yield* Effect.forkChild(limiter.withPermit(key, "bulk", () => Effect.succeed("should not run")))
      yield* TestClock.adjust(10)
      yield* Fiber.interrupt(waiting)
      yield* TestClock.adjust(1100)
      const metrics = (yield* limiter.metrics).find((m) => m.key.endsWith(":1:2:pos:/v3.0/product/list") || m.key === "1:2:pos:/v3.0/product/list")!
      assert.strictEqual(metrics.calls, 4)
      assert.strictEqual(metrics.queueDepth, 0)
      // The full budget is there for the next window.
      yield* Effect.forEach([1, 2, 3, 4], () => limiter.withPermit(key, "bulk", () => Effect.void))
      assert.strictEqual((yield* limiter.metrics)[0]!.calls, 8)
    }).pipe(Effect.provide(limiterLayer())))

  it.effect("a lock another process received holds this process's calls for the key until it ends", () =>
    Effect.gen(function*() {
      const now = 2_000_000
      yield* TestClock.setTime(now)
      const remote = yield* Queue.unbounded<RemoteLock>()
      const store = { ...makeMemory(), remoteLocks: Stream.fromQueue(remote) }
      yield* Effect.gen(function*() {
        const limiter = yield* RateLimiter
        // One key already in use here, one never used yet: both must honour the remote lock.
        yield* limiter.withPermit(key, "bulk", () => Effect.void)
        yield* Queue.offerAll(remote, [{ key: keyString(key), until: now + 5000 }, { key: keyString(other), until: now + 7000 }])
        yield* TestClock.adjust(1)
        assert.deepStrictEqual(yield* limiter.lockedUntil(other), Option.some(now + 7000))
        const sent: Array<string> = []
        const a = yield* Effect.forkChild(limiter.withPermit(key, "interactive", () => Effect.sync(() => void sent.push("key"))))
        const b = yield* Effect.forkChild(limiter.withPermit(other, "interactive", () => Effect.sync(() => void sent.push("other"))))
        yield* TestClock.adjust(4998)
        assert.deepStrictEqual(sent, [])
        yield* TestClock.adjust(1)
        yield* Fiber.join(a)
        assert.deepStrictEqual(sent, ["key"])
        yield* TestClock.adjust(1999)
        assert.deepStrictEqual(sent, ["key"])
        yield* TestClock.adjust(1)
        yield* Fiber.join(b)
        assert.deepStrictEqual(sent, ["key", "other"])
      }).pipe(Effect.provide(limiterLayer(store)))
    }))

  it.effect("a 429 locks its key until max(unlockedAt, receipt + lockedSeconds) + skew; other keys go on", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const now = 1_000_000
      yield* TestClock.setTime(now)
      const until = yield* limiter.lock(key, { lockedSeconds: 10, unlockedAt: now / 1000 + 3, receivedAt: now })
      assert.strictEqual(until, now + 10_000 + 500)
      const byUnlockedAt = yield* limiter.lock(other, { lockedSeconds: 1, unlockedAt: now / 1000 + 20, receivedAt: now })
      assert.strictEqual(byUnlockedAt, now + 20_000 + 500)
      const third = { tenant: Ids.makeTenant(1, 4), operation: op }
      const sent: Array<string> = []
      const locked = yield* Effect.forkChild(limiter.withPermit(key, "interactive", () => Effect.sync(() => void sent.push("locked"))))
      yield* limiter.withPermit(third, "interactive", () => Effect.sync(() => void sent.push("free")))
      yield* TestClock.adjust(10_499)
      assert.deepStrictEqual(sent, ["free"])
      assert.isTrue(Option.isSome(yield* limiter.lockedUntil(key)))
      yield* TestClock.adjust(1)
      yield* Fiber.join(locked)
      assert.deepStrictEqual(sent, ["free", "locked"])
    }).pipe(Effect.provide(limiterLayer())))

  it.effect("a restart honours the lock and the spent budget (persisted store)", () =>
    Effect.gen(function*() {
      const store = makeMemory()
      const events: Array<TransportEvent> = []
      yield* TestClock.setTime(5_000_000)
      yield* Effect.gen(function*() {
        const limiter = yield* RateLimiter
        yield* Effect.forEach([1, 2, 3], () => limiter.withPermit(other, "bulk", () => Effect.void))
        yield* limiter.lock(key, { lockedSeconds: 30, unlockedAt: undefined, receivedAt: 5_000_000 })
      }).pipe(Effect.provide(limiterLayer(store, events)))
      // A new limiter (a restarted process) over the same store.
      yield* Effect.gen(function*() {
        const limiter = yield* RateLimiter
        assert.deepStrictEqual(yield* limiter.lockedUntil(key), Option.some(5_000_000 + 30_000 + 500))
        const sent: Array<string> = []
        const f1 = yield* Effect.forkChild(limiter.withPermit(other, "bulk", () => Effect.sync(() => void sent.push("4th"))))
        const f2 = yield* Effect.forkChild(limiter.withPermit(other, "bulk", () => Effect.sync(() => void sent.push("5th"))))
        yield* TestClock.adjust(1)
        assert.deepStrictEqual(sent, ["4th"], "three calls of the window were spent before the restart")
        yield* TestClock.adjust(1001)
        yield* Fiber.join(f1)
        yield* Fiber.join(f2)
        assert.deepStrictEqual(sent, ["4th", "5th"])
        const locked = yield* Effect.forkChild(limiter.withPermit(key, "bulk", () => Effect.sync(() => void sent.push("after lock"))))
        yield* TestClock.adjust(28_000)
        assert.strictEqual(sent.length, 2)
        yield* TestClock.adjust(2_000)
        yield* Fiber.join(locked)
        assert.strictEqual(sent[2], "after lock")
      }).pipe(Effect.provide(limiterLayer(store, events)))
      assert.isTrue(events.some((e) => e._tag === "LockReleased"))
    }))

  it.effect("the sweep forgets idle keys and keeps busy, locked, or still-counting ones", () =>
    Effect.gen(function*() {
      const limiter = yield* RateLimiter
      const locked = { tenant: Ids.makeTenant(1, 4), operation: op }
      const keys = Effect.map(limiter.metrics, (ms) => ms.map((m) => m.key).sort())
      yield* limiter.withPermit(key, "bulk", () => Effect.void) // idle once it leaves its window
      const hold = yield* Deferred.make<void>()
      const busy = yield* Effect.forkChild(limiter.withPermit(other, "bulk", () => Deferred.await(hold)))
      yield* TestClock.adjust(1)
      const lockEnd = yield* limiter.lock(locked, { lockedSeconds: 30, unlockedAt: undefined, receivedAt: 0 })
      assert.strictEqual((yield* keys).length, 3)

      // First sweep at 5 s: the finished call left its 1 s window, so that key goes.
      yield* TestClock.adjust(4_999)
      assert.deepStrictEqual(yield* keys, [keyString(other), keyString(locked)].sort())
      assert.deepStrictEqual(yield* limiter.totals, { keys: 2, swept: 1, calls: 2, waitMs: 0, locks: 1 })

      // The busy call ends at 5 s; four calls fill its window again just before the next sweep.
      yield* Deferred.succeed(hold, undefined)
      yield* Fiber.join(busy)
      yield* TestClock.adjust(4_500)
      yield* Effect.forEach([1, 2, 3, 4], () => limiter.withPermit(other, "bulk", () => Effect.void))
      yield* TestClock.adjust(500) // second sweep, at 10 s
      assert.deepStrictEqual(yield* keys, [keyString(other), keyString(locked)].sort())
      // Kept, so its budget still holds: a fifth call waits for the window.
      const sent: Array<string> = []
      const fifth = yield* Effect.forkChild(limiter.withPermit(other, "bulk", () => Effect.sync(() => void sent.push("fifth"))))
      yield* TestClock.adjust(100)
      assert.deepStrictEqual(sent, [])
      yield* TestClock.adjust(1_000)
      yield* Fiber.join(fifth)
      assert.deepStrictEqual(sent, ["fifth"])

      // The locked key outlives every sweep until its lock ends, and the lock still holds.
      yield* TestClock.adjust(5_000)
      assert.deepStrictEqual(yield* keys, [keyString(locked)])
      const afterLock = yield* Effect.forkChild(limiter.withPermit(locked, "bulk", () => Effect.sync(() => void sent.push("after lock"))))
      const now = yield* Clock.currentTimeMillis
      yield* TestClock.adjust(lockEnd - now - 1)
      assert.deepStrictEqual(sent, ["fifth"])
      yield* TestClock.adjust(1)
      yield* Fiber.join(afterLock)
      assert.deepStrictEqual(sent, ["fifth", "after lock"])
      yield* TestClock.adjust(10_000)
      assert.deepStrictEqual(yield* keys, [])
      // Totals keep what the forgotten keys counted: 8 calls, 1 lock, the waits of the held calls.
      const { waitMs, ...totals } = yield* limiter.totals
      assert.deepStrictEqual(totals, { keys: 0, swept: 3, calls: 8, locks: 1 })
      assert.isAtLeast(waitMs, 1_000)
    }).pipe(Effect.provide(limiterLayer(makeMemory(), [], 5_000))))

  it.effect("a key restored with a persisted lock survives the sweep and honours the lock; its end is reported", () =>
    Effect.gen(function*() {
      const store = makeMemory()
      const events: Array<TransportEvent> = []
      yield* TestClock.setTime(7_000_000)
      const until = yield* Effect.gen(function*() {
        const limiter = yield* RateLimiter
        return yield* limiter.lock(key, { lockedSeconds: 20, unlockedAt: undefined, receivedAt: 7_000_000 })
      }).pipe(Effect.provide(limiterLayer(store, events, 1_000)))
      // A restarted process over the same store, sweeping every second.
      yield* Effect.gen(function*() {
        const limiter = yield* RateLimiter
        yield* TestClock.adjust(10_000)
        assert.deepStrictEqual(yield* limiter.lockedUntil(key), Option.some(until))
        assert.strictEqual((yield* limiter.metrics).length, 1)
        const sent: Array<string> = []
        const call = yield* Effect.forkChild(limiter.withPermit(key, "bulk", () => Effect.sync(() => void sent.push("sent"))))
        yield* TestClock.adjust(until - 7_010_000 - 1)
        assert.deepStrictEqual(sent, [])
        yield* TestClock.adjust(1)
        yield* Fiber.join(call)
        assert.deepStrictEqual(sent, ["sent"])
        yield* TestClock.adjust(3_000)
        assert.deepStrictEqual(yield* limiter.metrics, [])
        assert.deepStrictEqual(yield* limiter.lockedUntil(key), Option.none())
      }).pipe(Effect.provide(limiterLayer(store, events, 1_000)))
      assert.strictEqual(events.filter((e) => e._tag === "LockReleased").length, 1)
    }))

  it.effect("a lock that ends while nobody calls is reported released when the sweep forgets the key", () =>
    Effect.gen(function*() {
      const events: Array<TransportEvent> = []
      yield* Effect.gen(function*() {
        const limiter = yield* RateLimiter
        const until = yield* limiter.lock(key, { lockedSeconds: 2, unlockedAt: undefined, receivedAt: 0 })
        yield* TestClock.adjust(until + 1_000)
        assert.deepStrictEqual(yield* limiter.metrics, [])
      }).pipe(Effect.provide(limiterLayer(makeMemory(), events, 1_000)))
      assert.deepStrictEqual(events.filter((e) => e._tag === "LockReleased").map((e) => e._tag === "LockReleased" && e.key), [keyString(key)])
      // A released lock names its tenant and operation, as a taken one does.
      const released = events.find((e) => e._tag === "LockReleased")!
      assert.deepStrictEqual([released.appId, released.businessId, released.operation], ["1", "2", Operation.key(op)])
    }))

  it("a key's text reads back to its tenant and operation, big ids included", () => {
    const big = { tenant: Ids.makeTenant(1001, 9007199254740993n), operation: op }
    assert.deepStrictEqual(whereOf(keyString(big)), { appId: "1001", businessId: "9007199254740993", operation: Operation.key(op), key: keyString(big) })
    assert.strictEqual(whereOf("not-a-key"), undefined)
  })
})
