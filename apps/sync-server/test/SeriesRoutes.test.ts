import { assert, describe, it } from "@effect/vitest"
import type { SyncState } from "@ocs/sync"
import { nextDueAt } from "../src/http/admin/SeriesRoutes.ts"

const MIN = 60_000
const state = (patch: Partial<SyncState.ResourceState>): SyncState.ResourceState => ({
  appId: "1",
  businessId: "2",
  resource: "pos:product/list",
  paused: null,
  cursor: null,
  fullStartedAt: 0,
  fullCompletedAt: 10 * MIN,
  windowEnd: null,
  incrementalBound: null,
  lastRunAt: 30 * MIN,
  pages: 0,
  records: 0,
  lastError: null,
  ...patch
})
const active = { status: "active", settings: {} }
const times = { intervalMs: 5 * MIN, reconcileMs: 6 * 60 * MIN }

describe("when a resource's next pass is due (the console's sync over time)", () => {
  it("the earlier of the next incremental and the next full pass, with the tenant's own settings first", () => {
    assert.strictEqual(nextDueAt(state({}), active, times, 31 * MIN), 35 * MIN)
    assert.strictEqual(nextDueAt(state({ lastRunAt: 400 * MIN }), active, times, 401 * MIN), 370 * MIN, "reconciliation due first")
    assert.strictEqual(nextDueAt(state({}), { status: "active", settings: { intervalSeconds: 600 } }, times, 31 * MIN), 40 * MIN)
  })

  it("now while a full pass runs or none completed; none while paused", () => {
    assert.strictEqual(nextDueAt(state({ cursor: "c" }), active, times, 31 * MIN), 31 * MIN)
    assert.strictEqual(nextDueAt(state({ fullCompletedAt: null }), active, times, 31 * MIN), 31 * MIN)
    assert.isNull(nextDueAt(state({}), { status: "paused", settings: {} }, times, 31 * MIN))
    assert.isNull(nextDueAt(state({ paused: { code: "X", message: "m", at: 0 } }), active, times, 31 * MIN))
  })
})
