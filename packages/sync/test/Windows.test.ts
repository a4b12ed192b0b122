import { assert, describe, it } from "@effect/vitest"
import { Operation } from "@ocs/protocol"
import { Windows as SyncWindows } from "@ocs/sync"

const DAY = 24 * 3600 * 1000

describe("sync windows", () => {
  it("a full read of bill/list walks whole 31-day date windows back to the horizon, without gap or overlap", () => {
    const window = Operation.billList.window!
    const now = Date.UTC(2026, 10, 24, 5, 0)
    const horizon = now - 365 * DAY
    const days = new Set<string>()
    let end = now
    let windows = 0
    for (let range = SyncWindows.fullWindow(window, end, horizon); range !== undefined; range = SyncWindows.fullWindow(window, end, horizon)) {
      windows++
      const f = SyncWindows.rangeFilters(window, range)
      const from = Operation.parseBound(f["fromDate"], "date", "start")!
      const to = Operation.parseBound(f["toDate"], "date", "end")!
      assert.isAtMost(Math.round((to + 1 - from) / DAY), 31, `${f["fromDate"]}..${f["toDate"]}`)
      for (let d = from; d < to; d += DAY) {
        const day = Operation.formatBound(d, "date") as string
        assert.isFalse(days.has(day), `day ${day} read twice`)
        days.add(day)
      }
      end = SyncWindows.nextWindowEnd(range)
    }
    assert.strictEqual(windows, Math.ceil(366 / 31))
    assert.isTrue(days.has(Operation.formatBound(now, "date") as string), "today is read")
    assert.isTrue(days.has(Operation.formatBound(horizon, "date") as string), "the horizon's day is read")
  })

  it("unix windows (order/list by creation time) span at most 31 days each", () => {
    const window = Operation.orderList.window!
    const now = 1_800_000_000_000
    const r = SyncWindows.fullWindow(window, now, now - 100 * DAY)!
    const f = SyncWindows.rangeFilters(window, r)
    assert.isAtMost((f["createdAtTo"] as number) - (f["createdAtFrom"] as number), 31 * 86400)
    assert.strictEqual(SyncWindows.fullWindow(window, now - 101 * DAY, now - 100 * DAY), undefined)
  })

  it("unix windows of a full read tile exactly: each window's createdAtTo is the second before the next one's createdAtFrom", () => {
    const window = Operation.orderList.window!
    // Not on a whole second: the case where windows used to share their boundary second.
    const now = 1_800_000_000_123
    const horizon = now - 365 * DAY
    const seconds: Array<{ readonly from: number; readonly to: number }> = []
    let end = now
    for (let range = SyncWindows.fullWindow(window, end, horizon); range !== undefined; range = SyncWindows.fullWindow(window, end, horizon)) {
      const f = SyncWindows.rangeFilters(window, range)
      seconds.push({ from: f["createdAtFrom"] as number, to: f["createdAtTo"] as number })
      end = SyncWindows.nextWindowEnd(range)
    }
    assert.isAtLeast(seconds.length, 11)
    assert.strictEqual(seconds[0]!.to, Math.floor(now / 1000), "the newest window ends in the current second")
    for (let i = 1; i < seconds.length; i++) {
      // Newest first: window i is older than window i - 1.
      assert.strictEqual(seconds[i]!.to + 1, seconds[i - 1]!.from, `windows ${i} and ${i - 1}: no shared second, no gap`)
    }
    for (const w of seconds) assert.isAtMost(w.to - w.from + 1, 31 * 86400)
    assert.isAtMost(seconds.at(-1)!.from, Math.floor(horizon / 1000) + 1)
  })

  it("incremental unix pieces tile exactly too", () => {
    const inc = Operation.orderList.incremental!
    const to = 1_800_000_000_777
    const parts = SyncWindows.pieces(to - 70 * DAY - 500, to, inc.maxDays, inc.format)
    const f = parts.map((p) => SyncWindows.rangeFilters(inc, p))
    for (let i = 1; i < f.length; i++) assert.strictEqual((f[i]![inc.from] as number), (f[i - 1]![inc.to] as number) + 1)
  })

  it("an incremental range longer than the limit is read in pieces, oldest first", () => {
    const inc = Operation.orderList.incremental!
    const to = 1_800_000_000_000
    const parts = SyncWindows.pieces(to - 70 * DAY, to, inc.maxDays, inc.format)
    assert.strictEqual(parts.length, 3)
    assert.strictEqual(parts[0]!.from, to - 70 * DAY)
    assert.strictEqual(Operation.formatBound(parts[2]!.to, "unix"), Operation.formatBound(to, "unix"))
    for (let i = 1; i < parts.length; i++) assert.strictEqual(parts[i]!.from, parts[i - 1]!.to + 1)
    assert.deepStrictEqual(SyncWindows.pieces(5, 10, undefined, "unix"), [{ from: 5, to: 10 }])
  })
})
