import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Operation } from "@ocs/protocol"
import { Planner, type SyncState } from "@ocs/sync"

const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR

const fresh = (resource: string): SyncState.ResourceState => ({
  appId: "1",
  businessId: "2",
  resource,
  paused: null,
  cursor: null,
  fullStartedAt: null,
  fullCompletedAt: null,
  windowEnd: null,
  incrementalBound: null,
  lastRunAt: null,
  pages: 0,
  records: 0,
  lastError: null
})

const input = (operation: Operation.Operation<unknown>, state: SyncState.ResourceState, over: Partial<Planner.PlanInput> = {}): Planner.PlanInput => ({
  tenant: { status: "active", settings: {} },
  operation,
  state,
  owned: true,
  intervalMs: MIN,
  reconcileMs: 6 * HOUR,
  overlapMs: 5 * MIN,
  horizonMs: 365 * DAY,
  ...over
})

const products = Operation.productList as Operation.Operation<unknown>
const orders = Operation.orderList as Operation.Operation<unknown>

describe("Planner", () => {
  it("a list without time filters read newest first (page service conversations): incremental by bound, no ranges; one without either is never incremental", () => {
    const conversations = Operation.conversationList("1000000001")
    const done = { ...fresh("c"), fullStartedAt: 10 * DAY - MIN, fullCompletedAt: 10 * DAY, incrementalBound: 10 * DAY - MIN, lastRunAt: 10 * DAY }
    const plan = Planner.decide(input(conversations, done), 10 * DAY + 2 * MIN)
    assert.deepStrictEqual(plan, { _tag: "Incremental", ranges: [], upTo: 10 * DAY + 2 * MIN, since: 10 * DAY - MIN - 5 * MIN })
    // Page customers: neither a time filter nor a sort by change time: full passes only.
    assert.strictEqual(Planner.decide(input(Operation.pageCustomerList("1000000001"), done), 10 * DAY + 2 * MIN)._tag, "Skip")
  })

  it.effect("a resource never synced gets a full pass, the first of its kind (baseline), at the clock's time", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(10 * DAY)
      const plan = yield* Planner.plan(input(products, fresh("products")))
      assert.strictEqual(plan._tag, "Full")
      if (plan._tag !== "Full") return
      assert.strictEqual(plan.startedAt, 10 * DAY)
      assert.isFalse(plan.resuming)
      assert.isTrue(plan.pass.baseline)
      // Product lists read everything, so the pass can find deletions.
      assert.strictEqual(plan.pass.id, `${Operation.resourceKey(products)}:${10 * DAY}`)
    }))

  it.effect("after a full pass, incremental passes come every interval and a full one after the reconcile period", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(10 * DAY)
      const done = { ...fresh("products"), fullStartedAt: 10 * DAY - MIN, fullCompletedAt: 10 * DAY, incrementalBound: 10 * DAY - MIN, lastRunAt: 10 * DAY }
      assert.strictEqual((yield* Planner.plan(input(products, done)))._tag, "Skip")
      yield* TestClock.adjust(MIN - 1)
      assert.strictEqual((yield* Planner.plan(input(products, done)))._tag, "Skip")
      yield* TestClock.adjust(1)
      const inc = yield* Planner.plan(input(products, done))
      assert.strictEqual(inc._tag, "Incremental")
      if (inc._tag === "Incremental") {
        assert.strictEqual(inc.upTo, 10 * DAY + MIN)
        // From the last bound less the overlap.
        assert.deepStrictEqual(inc.ranges, [{ updatedAtFrom: Math.floor((10 * DAY - 6 * MIN) / 1000), updatedAtTo: Math.floor((10 * DAY + MIN) / 1000) }])
      }
      yield* TestClock.adjust(6 * HOUR)
      const full = yield* Planner.plan(input(products, done))
      assert.strictEqual(full._tag, "Full")
      if (full._tag === "Full") assert.isFalse(full.pass.baseline)
    }))

  it.effect("a gap fill makes the incremental pass due before its interval; a tenant's own interval wins over the server's", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(DAY)
      const done = { ...fresh("products"), fullStartedAt: DAY, fullCompletedAt: DAY, incrementalBound: DAY, lastRunAt: DAY }
      yield* TestClock.adjust(10_000)
      assert.strictEqual((yield* Planner.plan(input(products, done)))._tag, "Skip")
      assert.strictEqual((yield* Planner.plan(input(products, done, { gapFill: true })))._tag, "Incremental")
      assert.strictEqual((yield* Planner.plan(input(products, done, { tenant: { status: "active", settings: { intervalSeconds: 10 } } })))._tag, "Incremental")
    }))

  it.effect("a stored cursor or window resumes the full pass where it stopped, keeping its start; forceFull starts over", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(100 * DAY)
      const cut = { ...fresh("orders"), fullStartedAt: 99 * DAY, windowEnd: 40 * DAY, cursor: "{\"id\":7}" }
      const plan = yield* Planner.plan(input(orders, cut))
      assert.strictEqual(plan._tag, "Full")
      if (plan._tag === "Full") {
        assert.isTrue(plan.resuming)
        assert.strictEqual(plan.startedAt, 99 * DAY)
        assert.strictEqual(plan.windowEnd, 40 * DAY)
        assert.strictEqual(plan.cursor, "{\"id\":7}")
        assert.strictEqual(plan.horizon, 99 * DAY - 365 * DAY)
        assert.strictEqual(Planner.modeOf(plan), "resume")
      }
      const forced = yield* Planner.plan(input(orders, cut, { forceFull: true }))
      assert.strictEqual(forced._tag, "Full")
      if (forced._tag === "Full") {
        assert.isFalse(forced.resuming)
        assert.strictEqual(forced.startedAt, 100 * DAY)
        assert.strictEqual(forced.cursor, null)
        assert.strictEqual(forced.windowEnd, 100 * DAY)
      }
    }))

  it.effect("an incremental order read longer than 31 days is cut into windows that tile exactly", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(200 * DAY + 123)
      const behind = { ...fresh("orders"), fullStartedAt: 100 * DAY, fullCompletedAt: 199.9 * DAY, incrementalBound: 130 * DAY, lastRunAt: 130 * DAY }
      const plan = yield* Planner.plan(input(orders, behind, { reconcileMs: 365 * DAY }))
      assert.strictEqual(plan._tag, "Incremental")
      if (plan._tag !== "Incremental") return
      assert.strictEqual(plan.ranges.length, 3)
      for (let i = 1; i < plan.ranges.length; i++) {
        assert.strictEqual(plan.ranges[i]!["updatedAtFrom"], (plan.ranges[i - 1]!["updatedAtTo"] as number) + 1)
      }
    }))

  it.effect("nothing runs for a tenant on hold, a paused resource, or a tenant another server owns", () =>
    Effect.gen(function*() {
      const state = fresh("products")
      assert.strictEqual((yield* Planner.plan(input(products, state, { tenant: { status: "attention", settings: {} } })))._tag, "Skip")
      assert.strictEqual((yield* Planner.plan(input(products, { ...state, paused: { code: "ERR_403", message: "no", at: 1 } })))._tag, "Skip")
      assert.strictEqual((yield* Planner.plan(input(products, state, { owned: false })))._tag, "Skip")
    }))

  it("a tenant's loop pauses for its shortest period plus up to a tenth more, never less", () => {
    const periods = { intervalMs: MIN, reconcileMs: HOUR, silenceMs: 10 * MIN }
    assert.strictEqual(Planner.pauseMillis(undefined, periods, 0), MIN)
    assert.strictEqual(Planner.pauseMillis(undefined, periods, 0.999), MIN + Math.round(0.999 * MIN * 0.1))
    assert.strictEqual(Planner.pauseMillis({ settings: { intervalSeconds: 30 } }, periods, 0), 30_000)
    assert.strictEqual(Planner.pauseMillis({ settings: { intervalSeconds: 3600 } }, periods, 0), 10 * MIN)
  })
})
