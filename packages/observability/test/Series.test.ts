import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as Series from "../src/Series.ts"

const sum = (values: ReadonlyArray<number | null>) => values.reduce<number>((n, v) => n + (v ?? 0), 0)

describe("console series", () => {
  it.effect("counts a counter's increases into the bucket of each reading, with TestClock", () =>
    Effect.gen(function*() {
      const store = new Series.Store()
      let accepted = 0
      let lag = 0
      const read = Effect.sync((): Series.Reading => ({ counters: { accepted }, levels: { lag } }))
      const fiber = yield* Effect.forkChild(Series.run(store, read, "5 seconds"))
      yield* TestClock.adjust("1 millis")
      // 7 webhooks in the first 10 s bucket, 3 in the next, none after.
      accepted = 7
      lag = 40
      yield* TestClock.adjust("5 seconds")
      lag = 12
      yield* TestClock.adjust("5 seconds")
      accepted = 10
      yield* TestClock.adjust("5 seconds")
      yield* TestClock.adjust("30 seconds")
      const hour = store.server.read("hour", 45_000)!
      assert.strictEqual(hour.stepMs, 10_000)
      assert.strictEqual(hour.series["accepted"]!.length, 360)
      assert.strictEqual(hour.start, 40_000 - 359 * 10_000)
      const last = hour.series["accepted"]!.slice(-5)
      // Buckets 0-10 s (readings at 0 and 5 s), 10-20 s (10 and 15 s), 20-30, 30-40, 40-50.
      assert.deepStrictEqual(last, [7, 3, 0, 0, 0])
      assert.strictEqual(sum(hour.series["accepted"]!), 10)
      // Before the first reading: no data, not zero.
      assert.strictEqual(hour.series["accepted"]![0], null)
      // A level keeps the bucket's highest reading.
      assert.deepStrictEqual(hour.series["lag"]!.slice(-5, -3), [40, 12])
      // The day: one 1-minute bucket holds all ten.
      const day = store.server.read("day", 45_000)!
      assert.strictEqual(day.stepMs, 60_000)
      assert.strictEqual(day.series["accepted"]!.at(-1), 10)
      yield* Fiber.interrupt(fiber)
    }))

  it("forgets what is older than its range, and never grows", () => {
    const store = new Series.Store()
    store.record({ counters: { n: 0 }, levels: {} }, 0)
    for (let t = 10_000; t <= 2 * 3600_000; t += 10_000) store.record({ counters: { n: t / 10_000 }, levels: {} }, t)
    const hour = store.server.read("hour", 2 * 3600_000)!
    // Every bucket of the last hour holds exactly its one increase; nothing of the first hour is left.
    assert.strictEqual(hour.series["n"]!.filter((v) => v === 1).length, 360)
    assert.strictEqual(sum(hour.series["n"]!), 360)
    const day = store.server.read("day", 2 * 3600_000)!
    assert.strictEqual(sum(day.series["n"]!), 720)
  })

  it("a counter that goes down (a restart of its owner) counts from zero", () => {
    const store = new Series.Store()
    store.record({ counters: { n: 50 }, levels: {} }, 0)
    store.record({ counters: { n: 60 }, levels: {} }, 10_000)
    store.record({ counters: { n: 4 }, levels: {} }, 20_000)
    assert.deepStrictEqual(store.server.read("hour", 20_000)!.series["n"]!.slice(-3), [0, 10, 4])
  })

  it("keeps series for active tenants only, and at most maxTenants of them", () => {
    const store = new Series.Store({ maxTenants: 100 })
    const tenants = (pages: (i: number) => number) => new Map(Array.from({ length: 5000 }, (_, i) => [`1:${i}`, { pages: pages(i) }]))
    store.record({ counters: {}, levels: {}, tenants: tenants(() => 3) }, 0)
    // 5,000 tenants, none active: no series made.
    store.record({ counters: {}, levels: {}, tenants: tenants(() => 3) }, 60_000)
    assert.strictEqual(store.tenants.size, 0)
    // 300 become active: the 100 most recently active are kept.
    store.record({ counters: {}, levels: {}, tenants: tenants((i) => i < 300 ? 5 : 3) }, 120_000)
    assert.strictEqual(store.tenants.size, 100)
    assert.deepStrictEqual(store.tenants.get("1:299")!.read("hour", 120_000)!.series["pages"]!.at(-1), 2)
    assert.strictEqual(store.tenants.get("1:0"), undefined)
    // A tenant registered later counts from nothing: its first reading is all new.
    const later = new Map([["2:1", { pages: 4 }]])
    store.record({ counters: {}, levels: {}, tenants: later }, 180_000)
    assert.strictEqual(store.tenants.get("2:1")!.read("hour", 180_000)!.series["pages"]!.at(-1), 4)
  })
})
