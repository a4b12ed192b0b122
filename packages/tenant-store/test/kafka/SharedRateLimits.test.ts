/**
 * Rate-limit locks shared through a compacted topic: a lock one server receives holds the
 * calls of the others for that key, and a server that starts later holds it too.
 */
import { assert, describe, it } from "@effect/vitest"
import { kafkaBrokers, kafkaUnavailable } from "@ocs/kafka-broker/testing"
import { Ids, Operation } from "@ocs/protocol"
import { RateLimiter, RateLimitStore, TransportEvents } from "@ocs/transport"
import { Clock, Context, Effect, Fiber, Layer, Option } from "effect"
import * as SharedRateLimits from "../../src/SharedRateLimits.ts"

const topic = `ocs-rate-limits-test-${process.pid}-${Date.now()}`
const key = { tenant: Ids.makeTenant(7001, 8001), operation: Operation.productList }
const other = { tenant: Ids.makeTenant(7001, 8002), operation: Operation.productList }

/** One server's limiter: its own store (memory), shared through the topic. */
const server = () =>
  RateLimiter.RateLimiter.layer({ safetyMargin: 0, skewAllowanceMs: 0 }).pipe(
    Layer.provide(SharedRateLimits.layer({ brokers: kafkaBrokers(), topic }).pipe(
      Layer.provide(Layer.sync(RateLimitStore.RateLimitStore, () => RateLimitStore.makeMemory()))
    )),
    Layer.provide(TransportEvents.TransportEvents.collect([]))
  )

const start = Effect.map(Layer.build(server()), (context) => Context.get(context, RateLimiter.RateLimiter))

/** A limiter whose budget for product/list is 3 calls a minute (one window outlasts the test). */
const small = () =>
  RateLimiter.RateLimiter.layer({ safetyMargin: 0, skewAllowanceMs: 0, overrides: { [Operation.productList.path]: { requests: 3, windowSeconds: 60 } } }).pipe(
    Layer.provide(SharedRateLimits.layer({ brokers: kafkaBrokers(), topic, callsPublishMillis: 20 }).pipe(
      Layer.provide(Layer.sync(RateLimitStore.RateLimitStore, () => RateLimitStore.makeMemory()))
    )),
    Layer.provide(TransportEvents.TransportEvents.collect([]))
  )
const startSmall = Effect.map(Layer.build(small()), (context) => Context.get(context, RateLimiter.RateLimiter))

/** Waits until the limiter's metrics for `k` satisfy `ok`. */
const metricsOf = (limiter: RateLimiter.RateLimiter["Service"], k: RateLimiter.BudgetKey, ok: (m: RateLimiter.KeyMetrics) => boolean) =>
  Effect.gen(function*() {
    const name = RateLimiter.keyString(k)
    while (true) {
      const m = (yield* limiter.metrics).find((x) => x.key === name)
      if (m !== undefined && ok(m)) return m
      yield* Effect.sleep(20)
    }
  })

const until = (limiter: RateLimiter.RateLimiter["Service"], k: RateLimiter.BudgetKey) =>
  Effect.gen(function*() {
    while (true) {
      const locked = yield* limiter.lockedUntil(k)
      if (Option.isSome(locked)) return locked.value
      yield* Effect.sleep(20)
    }
  })

describe.skipIf(kafkaUnavailable())("rate-limit locks shared by the servers of one cluster", () => {
  it.live("a lock one server receives holds the others' calls, and a server started later", () =>
    Effect.gen(function*() {
      const a = yield* start
      const b = yield* start
      const now = yield* Clock.currentTimeMillis
      const lockedUntil = yield* a.lock(key, { lockedSeconds: 3, receivedAt: now })
      assert.strictEqual(yield* until(b, key), lockedUntil)
      assert.isTrue(Option.isNone(yield* b.lockedUntil(other)), "another key stays free")

      // B's call for the key leaves only once A's lock has ended.
      const sent = yield* Effect.forkChild(b.withPermit(key, "interactive", () => Clock.currentTimeMillis))
      const at = yield* Fiber.join(sent)
      assert.isAtLeast(at, lockedUntil)

      // A server that starts now (after the lock) reads it from the topic before it serves.
      const c = yield* start
      const second = yield* b.lock(other, { lockedSeconds: 60, receivedAt: yield* Clock.currentTimeMillis })
      assert.strictEqual(yield* until(c, other), second)
      const later = yield* start
      assert.deepStrictEqual(yield* later.lockedUntil(other), Option.some(second))
    }).pipe(Effect.scoped), 120_000)
  it.live("calls one server makes spend the budget the others see, and a server started later", () =>
    Effect.gen(function*() {
      const budgetKey = { tenant: Ids.makeTenant(7001, 8003), operation: Operation.productList }
      const a = yield* startSmall
      const b = yield* startSmall
      // A spends the whole budget of the key (3 calls in the window).
      for (let i = 0; i < 3; i++) yield* a.withPermit(budgetKey, "interactive", () => Effect.void)
      // B counts A's calls in its own window...
      const seen = yield* metricsOf(b, budgetKey, (m) => m.recentCalls >= 3)
      assert.strictEqual(seen.recentCalls, 3)
      // ...so its own call waits for the window (a minute) instead of leaving: it stays queued.
      const held = yield* Effect.forkChild(b.withPermit(budgetKey, "interactive", () => Effect.void))
      const waiting = yield* metricsOf(b, budgetKey, (m) => m.queueDepth === 1)
      assert.strictEqual(waiting.inFlight, 0)
      yield* Fiber.interrupt(held)
      // A server started now reads A's calls from the topic.
      const c = yield* startSmall
      assert.strictEqual((yield* metricsOf(c, budgetKey, (m) => m.recentCalls >= 3)).recentCalls, 3)
    }).pipe(Effect.scoped), 120_000)
})
