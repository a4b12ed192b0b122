import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import * as Core from "../src/internal/schedulerCore.ts"

const waiter = (log: Array<string>, name: string, priority: Core.Priority = Core.PRIORITY_BULK, now = 0): Core.Waiter => ({
  grant: () => void log.push(name),
  priority,
  enqueuedAt: now,
  cancelled: false,
  ticket: undefined
})

describe("SchedulerCore", () => {
  it("property: whatever the latencies, no window of the server's can see more than the limit", () => {
    // A request may reach the server at any instant between our send and our receipt of the
    // answer. For each request j, count the requests whose interval can share a window of
    // length W with j's send: that count must never exceed the limit.
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 50, max: 1000 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 300 })), { minLength: 1, maxLength: 120 }),
        (limit, windowMs, plan) => {
          let now = 1_000_000
          const core = new Core.SchedulerCore(now, { maxInFlight: 1000 })
          const s = core.keyState("k", limit, windowMs)
          const calls: Array<{ sent: number; done: number }> = []
          const pending: Array<{ at: number; ticket: Core.Ticket; call: { sent: number; done: number } }> = []
          const queue = [...plan]
          const step = (t: number) => {
            now = t
            for (const p of pending.filter((x) => x.at <= now)) {
              core.release(p.ticket, p.at, true)
              p.call.done = p.at
              pending.splice(pending.indexOf(p), 1)
            }
            core.dispatch(now)
          }
          for (const [gap, latency] of queue) {
            const w: Core.Waiter = {
              grant: (ticket) => {
                const call = { sent: now, done: Infinity }
                calls.push(call)
                pending.push({ at: now + latency, ticket, call })
              },
              priority: Core.PRIORITY_BULK,
              enqueuedAt: now,
              cancelled: false,
              ticket: undefined
            }
            core.enqueue(s, w)
            step(now + gap)
          }
          // Drain: advance to each next event until nothing is left.
          for (let guard = 0; guard < 10_000 && (pending.length > 0 || s.waiting > 0); guard++) {
            const next = Math.min(core.nextWake(), ...pending.map((p) => p.at))
            step(Math.max(now + 1, next))
          }
          assert.strictEqual(s.waiting, 0)
          for (const j of calls) {
            const overlapping = calls.filter((i) => i.sent <= j.sent && i.done >= j.sent - windowMs)
            if (overlapping.length > limit) return false
          }
          return calls.length === plan.length
        }
      ),
      { numRuns: 300 }
    )
  })

  it("uses the whole budget: limit calls at once, the next one a window after the first completes", () => {
    const core = new Core.SchedulerCore(0, { maxInFlight: 100 })
    const s = core.keyState("k", 3, 1000)
    const log: Array<string> = []
    const tickets: Array<Core.Ticket> = []
    for (let i = 0; i < 5; i++) {
      const w = waiter(log, `c${i}`)
      const grant = w.grant
      core.enqueue(s, { ...w, grant: (t) => (tickets.push(t), grant(t)) })
    }
    core.dispatch(0)
    assert.deepStrictEqual(log, ["c0", "c1", "c2"])
    core.release(tickets[0]!, 10, true)
    core.release(tickets[1]!, 20, true)
    core.dispatch(20)
    assert.strictEqual(log.length, 3, "completions inside the window keep their slots")
    assert.strictEqual(core.nextWake(), 10 + 1000 + 1)
    core.dispatch(1010)
    assert.strictEqual(log.length, 3)
    core.dispatch(1011)
    assert.deepStrictEqual(log, ["c0", "c1", "c2", "c3"])
  })

  it("locks: nothing leaves before the lock ends; other keys go on", () => {
    const core = new Core.SchedulerCore(0, { maxInFlight: 100 })
    const a = core.keyState("a", 10, 1000)
    const b = core.keyState("b", 10, 1000)
    const log: Array<string> = []
    core.lock(a, 5000)
    core.enqueue(a, waiter(log, "a1"))
    core.enqueue(b, waiter(log, "b1"))
    core.dispatch(100)
    assert.deepStrictEqual(log, ["b1"])
    assert.strictEqual(core.nextWake(), 5000)
    core.dispatch(4999)
    assert.deepStrictEqual(log, ["b1"])
    core.dispatch(5000)
    assert.deepStrictEqual(log, ["b1", "a1"])
  })

  it("fairness: a key with a deep queue does not starve another key", () => {
    const core = new Core.SchedulerCore(0, { maxInFlight: 1 })
    const noisy = core.keyState("noisy", 1000, 1000)
    const quiet = core.keyState("quiet", 1000, 1000)
    const log: Array<string> = []
    const tickets: Array<Core.Ticket> = []
    const track = (w: Core.Waiter): Core.Waiter => ({ ...w, grant: (t) => (tickets.push(t), w.grant(t)) })
    for (let i = 0; i < 100; i++) core.enqueue(noisy, track(waiter(log, "noisy")))
    for (let i = 0; i < 3; i++) core.enqueue(quiet, track(waiter(log, "quiet")))
    for (let t = 1; log.length < 8; t++) {
      core.dispatch(t)
      core.release(tickets[tickets.length - 1]!, t, true)
    }
    assert.deepStrictEqual(log.slice(0, 6), ["noisy", "quiet", "noisy", "quiet", "noisy", "quiet"])
  })

  it("priority: interactive calls go before bulk calls queued earlier", () => {
    const core = new Core.SchedulerCore(0, { maxInFlight: 1 })
    const k1 = core.keyState("k1", 100, 1000)
    const k2 = core.keyState("k2", 100, 1000)
    const log: Array<string> = []
    const tickets: Array<Core.Ticket> = []
    const track = (w: Core.Waiter): Core.Waiter => ({ ...w, grant: (t) => (tickets.push(t), w.grant(t)) })
    core.enqueue(k1, track(waiter(log, "bulk1")))
    core.enqueue(k1, track(waiter(log, "bulk2")))
    core.enqueue(k2, track(waiter(log, "interactive-k2", Core.PRIORITY_INTERACTIVE)))
    core.enqueue(k1, track(waiter(log, "interactive-k1", Core.PRIORITY_INTERACTIVE)))
    for (let t = 1; t <= 4; t++) {
      core.dispatch(t)
      core.release(tickets[tickets.length - 1]!, t, true)
    }
    assert.deepStrictEqual(log, ["interactive-k2", "interactive-k1", "bulk1", "bulk2"])
  })

  it("a cancelled waiter spends no budget", () => {
    const core = new Core.SchedulerCore(0, { maxInFlight: 10 })
    const s = core.keyState("k", 1, 1000)
    const log: Array<string> = []
    const gone = waiter(log, "gone")
    core.enqueue(s, gone)
    assert.strictEqual(core.cancel(s, gone), undefined)
    core.enqueue(s, waiter(log, "next"))
    core.dispatch(0)
    assert.deepStrictEqual(log, ["next"])
    assert.strictEqual(s.waiting, 0)
  })

  it("restored completions count against the window (restart)", () => {
    const core = new Core.SchedulerCore(10_000, { maxInFlight: 10 })
    for (const at of [9_500, 9_600]) core.restoreCompletion("k", 2, 1000, at)
    const s = core.keyState("k", 2, 1000)
    const log: Array<string> = []
    core.enqueue(s, waiter(log, "x"))
    core.dispatch(10_000)
    assert.deepStrictEqual(log, [])
    assert.strictEqual(core.nextWake(), 9_500 + 1000 + 1)
  })

  it("sweep forgets idle keys, keeps locked or busy ones", () => {
    const core = new Core.SchedulerCore(0, { maxInFlight: 10 })
    core.keyState("idle", 5, 100)
    core.lock(core.keyState("locked", 5, 100), 10_000)
    assert.strictEqual(core.sweep(1000), 1)
    assert.deepStrictEqual([...core.keys.keys()], ["locked"])
  })
})
