/**
 * The rate-limit scheduler's state machine: synchronous, allocation-light, clock passed in.
 *
 * Per budget key (appId + businessId + operation URL; docs/api-catalogue.md, Limits) it keeps:
 * - a sliding log of the completion times of the last `limit` calls: a ring of uint16 ticks
 *   from a per-key base (2 bytes a slot; a tick is 1 ms for windows under 40 s, coarser for
 *   longer ones, and times are rounded up, so rounding only ever makes us wait longer);
 * - the number of calls in flight;
 * - the lock end (after an ERR_429);
 * - FIFO queues of waiters, one per priority class.
 *
 * A call may leave at `now` when the key is not locked and
 *     inFlight + (completed calls with completion time > now - window) < limit.
 * Counting a call from its *completion* (and an in-flight call as occupying a slot) means that
 * whatever time the server records for a request (somewhere between our send and our receipt
 * of the answer), no window of `window` length at the server can hold more than `limit` of
 * them: the new call leaves at least `window` after the answer to the call `limit` places
 * before it arrived.
 *
 * Fairness: keys with waiters sit in ready rings served round-robin, interactive keys first; a
 * global in-flight cap is the shared resource they are fair about. Keys that must wait for
 * time (a window slot or a lock end) sit in a timer heap.
 */
import { Fifo } from "./fifo.ts"
import { TimerHeap } from "./timerHeap.ts"

export const PRIORITY_INTERACTIVE = 0
export const PRIORITY_BULK = 1
export type Priority = typeof PRIORITY_INTERACTIVE | typeof PRIORITY_BULK

export interface Waiter {
  /** Called synchronously when the waiter is granted a slot. */
  readonly grant: (ticket: Ticket) => void
  readonly priority: Priority
  readonly enqueuedAt: number
  cancelled: boolean
  ticket: Ticket | undefined
}

export interface Ticket {
  readonly key: KeyState
  readonly grantedAt: number
  released: boolean
}

export class KeyState {
  readonly key: string
  limit: number
  windowMs: number
  /** Completion times in ticks from `base`, oldest first. */
  ring: Uint16Array
  /** Absolute ms of tick 0, and ms per tick. */
  base = 0
  unit: number
  ringHead = 0
  ringCount = 0
  inFlight = 0
  lockedUntil = 0
  /** Waiters per priority; allocated on first use. */
  queues: [Fifo<Waiter> | undefined, Fifo<Waiter> | undefined] = [undefined, undefined]
  waiting = 0
  /** Which ready ring holds the key (-1: none). */
  readyIn = -1
  /** The wake time of the key's live timer entry (0: none). */
  timerAt = 0
  // metrics
  calls = 0
  waitMs = 0
  locks = 0
  constructor(key: string, limit: number, windowMs: number) {
    this.key = key
    this.limit = limit
    this.windowMs = windowMs
    this.unit = tickFor(windowMs)
    this.ring = new Uint16Array(Math.max(1, limit))
  }

  /** Absolute ms of the i-th oldest completion. */
  at(i: number): number {
    return this.base + this.ring[(this.ringHead + i) % this.ring.length]! * this.unit
  }
}

const MAX_TICK = 0xffff

/** Ms per tick: a window must fit in well under MAX_TICK ticks. */
const tickFor = (windowMs: number): number => Math.max(1, Math.ceil((windowMs + 2) / 40_000))

export interface CoreOptions {
  /** The shared cap on calls in flight across all keys. */
  readonly maxInFlight: number
  /** Called for each grant, after the core's state is updated (e.g. to persist it). */
  readonly onGrant?: ((ticket: Ticket) => void) | undefined
  /** Called when a key whose lock has ended is served again. */
  readonly onUnlock?: ((key: KeyState, lockedUntil: number) => void) | undefined
}

export class SchedulerCore {
  readonly keys = new Map<string, KeyState>()
  private readonly ready: [Fifo<KeyState>, Fifo<KeyState>] = [new Fifo(), new Fifo()]
  private readonly timers = new TimerHeap<KeyState>()
  private inFlight = 0
  readonly options: CoreOptions

  constructor(_now: number, options: CoreOptions) {
    this.options = options
  }

  get globalInFlight(): number {
    return this.inFlight
  }

  /** Gets or creates a key. A later call with other limits updates them. */
  keyState(key: string, limit: number, windowMs: number): KeyState {
    let s = this.keys.get(key)
    if (s === undefined) {
      s = new KeyState(key, limit, windowMs)
      this.keys.set(key, s)
    } else if (s.limit !== limit || s.windowMs !== windowMs) {
      const times = Array.from({ length: s.ringCount }, (_, i) => s!.at(i))
      s.ring = new Uint16Array(Math.max(1, limit))
      s.ringHead = 0
      s.ringCount = 0
      s.limit = limit
      s.windowMs = windowMs
      s.unit = tickFor(windowMs)
      for (const t of times.slice(-limit)) this.complete(s, t)
    }
    return s
  }

  /** Drops completions that left the window. */
  private prune(s: KeyState, now: number): void {
    // A completion at t counts until t + window inclusive: the next call leaves strictly later.
    const floor = now - s.windowMs - 1
    while (s.ringCount > 0 && s.at(0) <= floor) {
      s.ringHead = (s.ringHead + 1) % s.ring.length
      s.ringCount--
    }
  }

  /** Records a completion (kept sorted: completions arrive in time order). */
  private complete(s: KeyState, at: number): void {
    if (s.ringCount === 0) s.base = at
    // Rounded up to a tick, and never before the base: both only make us wait longer.
    let t = Math.max(0, Math.ceil((at - s.base) / s.unit))
    if (t > MAX_TICK) {
      // Move the base to the oldest entry; entries span at most a window after pruning.
      const shift = s.ringCount > 0 ? s.ring[s.ringHead]! : t
      for (let i = 0; i < s.ringCount; i++) {
        const j = (s.ringHead + i) % s.ring.length
        s.ring[j] = s.ring[j]! - shift
      }
      s.base += shift * s.unit
      t -= shift
      if (t > MAX_TICK) {
        // Only when old entries were not pruned: keep the newest, conservatively.
        s.ringCount = 0
        s.base = at
        t = 0
      }
    }
    if (s.ringCount === s.ring.length) {
      // Only reachable after a limit shrink: the oldest entry gives way.
      s.ringHead = (s.ringHead + 1) % s.ring.length
      s.ringCount--
    }
    let idx = (s.ringHead + s.ringCount) % s.ring.length
    s.ring[idx] = t
    s.ringCount++
    // A restored or out-of-order completion: bubble it into place.
    for (let n = s.ringCount - 1; n > 0; n--) {
      const prev = (idx - 1 + s.ring.length) % s.ring.length
      if (s.ring[prev]! <= s.ring[idx]!) break
      const tmp = s.ring[prev]!
      s.ring[prev] = s.ring[idx]!
      s.ring[idx] = tmp
      idx = prev
    }
  }

  /** Restores a persisted completion time (after a restart). */
  restoreCompletion(key: string, limit: number, windowMs: number, at: number): void {
    this.complete(this.keyState(key, limit, windowMs), at)
  }

  /** The earliest time a call for `s` may leave given its window (ignoring locks). */
  private windowFreeAt(s: KeyState, now: number): number {
    this.prune(s, now)
    if (s.inFlight + s.ringCount < s.limit) return now
    // The completion at position e (0 = oldest) must leave the window to free a slot.
    const e = s.inFlight + s.ringCount - s.limit
    if (e >= s.ringCount) return Infinity // every slot is in flight: only a release frees one
    return s.at(e) + s.windowMs + 1
  }

  enqueue(s: KeyState, waiter: Waiter): void {
    let q = s.queues[waiter.priority]
    if (q === undefined) {
      q = new Fifo()
      s.queues[waiter.priority] = q
    }
    q.push(waiter)
    s.waiting++
    this.markReady(s)
  }

  /** Marks a waiter cancelled; returns its ticket if it had already been granted. */
  cancel(s: KeyState, waiter: Waiter): Ticket | undefined {
    if (waiter.ticket !== undefined) return waiter.ticket
    if (!waiter.cancelled) {
      waiter.cancelled = true
      s.waiting--
    }
    return undefined
  }

  private headPriority(s: KeyState): Priority | undefined {
    for (let p = 0 as Priority; p <= PRIORITY_BULK; p = (p + 1) as Priority) {
      const q = s.queues[p]
      if (q === undefined) continue
      while (q.size > 0 && q.peek()!.cancelled) q.shift()
      if (q.size > 0) return p
    }
    return undefined
  }

  private markReady(s: KeyState): void {
    const p = this.headPriority(s)
    if (p === undefined) return
    if (s.readyIn === p) return
    if (s.readyIn !== -1 && s.readyIn < p) return // already in a better ring
    s.readyIn = p
    this.ready[p].push(s)
  }

  private arm(s: KeyState, at: number): void {
    if (s.timerAt !== 0 && s.timerAt <= at) return
    s.timerAt = at
    this.timers.push({ at, key: s })
  }

  /** Sets or extends a key's lock (absolute ms). */
  lock(s: KeyState, until: number): void {
    if (until > s.lockedUntil) {
      s.lockedUntil = until
      s.locks++
    }
  }

  /** Ends a call: frees its slot and, when it was sent, records its completion. */
  release(ticket: Ticket, now: number, sent: boolean): void {
    if (ticket.released) return
    ticket.released = true
    const s = ticket.key
    s.inFlight--
    this.inFlight--
    if (sent) {
      this.prune(s, now)
      this.complete(s, now)
    }
    if (s.waiting > 0) this.markReady(s)
  }

  /** Moves due timers to the ready rings. */
  private fireTimers(now: number): void {
    for (;;) {
      const top = this.timers.peek()
      if (top === undefined || top.at > now) return
      this.timers.pop()
      if (top.key.timerAt !== top.at) continue // superseded
      top.key.timerAt = 0
      this.markReady(top.key)
    }
  }

  /**
   * Grants as many waiting calls as budgets and the global cap allow, fairly. Returns the
   * number granted. Each grant calls its waiter's `grant` synchronously.
   */
  dispatch(now: number): number {
    this.fireTimers(now)
    let granted = 0
    while (this.inFlight < this.options.maxInFlight) {
      const ring = this.ready[0].size > 0 ? this.ready[0] : this.ready[1]
      const s = ring.shift()
      if (s === undefined) break
      const p = this.headPriority(s)
      s.readyIn = -1
      if (p === undefined) continue
      if (now < s.lockedUntil) {
        this.arm(s, s.lockedUntil)
        continue
      }
      if (s.lockedUntil !== 0) {
        const ended = s.lockedUntil
        s.lockedUntil = 0
        this.options.onUnlock?.(s, ended)
      }
      const freeAt = this.windowFreeAt(s, now)
      if (freeAt > now) {
        if (freeAt !== Infinity) this.arm(s, freeAt)
        continue // a release will mark it ready again
      }
      const waiter = s.queues[p]!.shift()!
      s.waiting--
      s.inFlight++
      this.inFlight++
      s.calls++
      s.waitMs += now - waiter.enqueuedAt
      const ticket: Ticket = { key: s, grantedAt: now, released: false }
      waiter.ticket = ticket
      granted++
      this.options.onGrant?.(ticket)
      waiter.grant(ticket)
      if (s.waiting > 0) this.markReady(s)
    }
    return granted
  }

  /** When the next timer is due (Infinity: none). */
  nextWake(): number {
    for (;;) {
      const top = this.timers.peek()
      if (top === undefined) return Infinity
      if (top.key.timerAt === top.at) return top.at
      this.timers.pop()
    }
  }

  /** Completion times (absolute ms) still inside the key's window. */
  recent(s: KeyState, now: number): Array<number> {
    this.prune(s, now)
    const out: Array<number> = []
    for (let i = 0; i < s.ringCount; i++) out.push(s.at(i))
    return out
  }

  /**
   * Forgets idle keys whose window is empty and which are not locked (bounded memory). A
   * forgotten key behaves as one never seen, which is exactly its state: no call counts in its
   * window and no lock holds. A lock that ended without the key being served again is reported
   * through `onUnlock` first.
   */
  sweep(now: number): number {
    let removed = 0
    for (const [k, s] of this.keys) {
      if (s.waiting > 0 || s.inFlight > 0 || s.lockedUntil > now || s.timerAt !== 0) continue
      this.prune(s, now)
      if (s.ringCount === 0) {
        if (s.lockedUntil !== 0) {
          const ended = s.lockedUntil
          s.lockedUntil = 0
          this.options.onUnlock?.(s, ended)
        }
        this.keys.delete(k)
        removed++
      }
    }
    return removed
  }
}
