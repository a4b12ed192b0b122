/**
 * The rate-limit scheduler.
 *
 * docs/api-catalogue.md, Limits: 150 requests per 30 seconds per appId + businessId + URL by default; an
 * operation may state its own limit; exceeding it gives ERR_429 and locks that URL for that
 * business until `unlockedAt`; calls during the lock extend it; other URLs and businesses are
 * not affected; limits are never lifted on request.
 *
 * So every call waits here for a slot of its budget key. Nothing for a locked key leaves the
 * process before the lock ends (plus a skew allowance). Queues are FIFO per key and priority;
 * keys are served round-robin, interactive calls first; a waiting call can be interrupted
 * without spending budget. Locks and recent calls are persisted through `RateLimitStore`.
 *
 * Memory stays bounded by the keys in use: a sweep on a schedule forgets keys that are idle
 * (no waiter, nothing in flight, no call left in their window, no lock), whose state is then
 * the same as a key never seen.
 */
import { Cause, Clock, Context, Deferred, Effect, Layer, Option, Schedule, Schema, Stream } from "effect"
import { Ids, Operation } from "@ocs/protocol"
import * as Core from "./internal/schedulerCore.ts"
import { RateLimitStore } from "./RateLimitStore.ts"
import * as TransportEventsModule from "./TransportEvents.ts"
import { TransportEvents } from "./TransportEvents.ts"

export type Priority = "interactive" | "bulk"

/** The budget a call spends: docs/api-catalogue.md, Limits: per appId + businessId + URL. */
export interface BudgetKey {
  readonly tenant: Ids.Tenant
  readonly operation: Pick<Operation.Operation, "family" | "path" | "rateLimit">
}

export const keyString = (key: BudgetKey): string =>
  `${Ids.tenantKey(key.tenant)}:${key.operation.family}:${key.operation.path}`

/**
 * Where a key string points (its tenant and operation), for keys known only by their text:
 * locks restored from the store after a restart, keys the sweep forgets. The inverse of
 * `keyString`; undefined for text of another shape.
 */
export const whereOf = (key: string): TransportEventsModule.Where | undefined => {
  const m = /^(\d+):(\d+):([a-z]+):(\/.*)$/.exec(key)
  return m === null ? undefined : { appId: m[1]!, businessId: m[2]!, operation: `${m[3]}:${m[4]}`, key }
}

const released = (u: { readonly key: string; readonly at: number }): TransportEventsModule.TransportEvent | undefined => {
  const where = whereOf(u.key)
  return where === undefined ? undefined : { _tag: "LockReleased", ...where, at: u.at }
}

/** The `rateLimits` section of a server's configuration: `RateLimiterOptions` as a person writes them. */
export const Section = Schema.Struct({
  safetyMargin: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  skewAllowanceMs: Schema.optional(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))),
  maxInFlight: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
  overrides: Schema.optional(Schema.Record(Schema.String, Operation.RateLimit))
})
export type Section = typeof Section.Type

/** The scheduler's defaults, written once. */
export const defaults = { safetyMargin: 0, skewAllowanceMs: 1000, maxInFlight: 256 } as const

export interface RateLimiterOptions {
  /**
   * Requests held back from every window (default 0). Counting each call from its completion
   * already keeps every window at the server within the limit whatever the latency; a margin
   * is for a service that counts in some other way.
   */
  readonly safetyMargin?: number | undefined
  /** Added to every lock end, for clock skew between us and the service (default 1000 ms). */
  readonly skewAllowanceMs?: number | undefined
  /** Calls in flight across all keys (default 256). */
  readonly maxInFlight?: number | undefined
  /**
   * Limits by operation path (e.g. "/v3.0/product/list") or by operation key
   * ("pos:/v3.0/product/list"), overriding the operation's own. Tests compress windows here.
   */
  readonly overrides?: Readonly<Record<string, Operation.RateLimit>> | undefined
  /** How long a call may wait for a lock to end before failing (default 15 minutes). */
  readonly maxLockWaitMs?: number | undefined
  /** How often idle keys are forgotten (default 60 s). */
  readonly sweepIntervalMs?: number | undefined
}

/** A call's slot. Mark it not sent when the request never left (the slot is then not counted). */
export interface Permit {
  readonly key: string
  readonly grantedAt: number
  readonly markNotSent: () => void
}

export interface KeyMetrics {
  readonly key: string
  readonly limit: number
  readonly windowMs: number
  readonly calls: number
  readonly waitMs: number
  readonly locks: number
  readonly queueDepth: number
  readonly inFlight: number
  readonly lockedUntil: number | undefined
  readonly recentCalls: number
}

/** Counters over every key since the limiter started, forgotten (swept) keys included. */
export interface Totals {
  /** Keys tracked now. */
  readonly keys: number
  /** Idle keys forgotten by the sweep. */
  readonly swept: number
  readonly calls: number
  readonly waitMs: number
  readonly locks: number
}

export class LockWaitExceeded extends Schema.TaggedError<LockWaitExceeded>()("LockWaitExceeded", {
  key: Schema.String,
  lockedUntil: Schema.Number,
  message: Schema.String
}) {}

export class RateLimiter extends Context.Service<RateLimiter, {
  /** Runs `use` inside a slot of the key's budget, waiting (interruptibly) for one. */
  readonly withPermit: <A, E, R>(
    key: BudgetKey,
    priority: Priority,
    use: (permit: Permit) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | LockWaitExceeded, R>
  /**
   * Locks a key after an ERR_429 until max(unlockedAt, receivedAt + lockedSeconds) plus the
   * skew allowance (receivedAt + the key's window when the answer gives neither). Returns the
   * lock end (ms).
   */
  readonly lock: (
    key: BudgetKey,
    lock: { readonly lockedSeconds?: number | undefined; readonly unlockedAt?: number | undefined; readonly receivedAt: number }
  ) => Effect.Effect<number>
  /** When the key's lock ends, if it is locked now. */
  readonly lockedUntil: (key: BudgetKey) => Effect.Effect<Option.Option<number>>
  /** The keys tracked now: an idle key leaves this list when the sweep forgets it. */
  readonly metrics: Effect.Effect<ReadonlyArray<KeyMetrics>>
  /** Counters that keep what swept keys had counted (for monotonic totals). */
  readonly totals: Effect.Effect<Totals>
  /** The effective limit and window for an operation (after overrides and margin). */
  readonly limitOf: (operation: BudgetKey["operation"]) => { readonly limit: number; readonly windowMs: number }
}>()("@ocs/transport/RateLimiter") {
  /** The limiter and its timer and sweep fibers, which stop when the layer's scope closes. */
  static readonly layer = (options: RateLimiterOptions = {}): Layer.Layer<RateLimiter, never, RateLimitStore | TransportEvents> =>
    Layer.effect(RateLimiter, make(options))
}

const priorities: Record<Priority, Core.Priority> = { interactive: Core.PRIORITY_INTERACTIVE, bulk: Core.PRIORITY_BULK }

interface PendingWaiter extends Core.Waiter {
  /** Set once the grant is persisted: the call may leave. */
  ready: boolean
  resume: ((ticket: Core.Ticket) => void) | undefined
}

export const make = Effect.fnUntraced(function*(options: RateLimiterOptions) {
  const store = yield* RateLimitStore
  const events = yield* TransportEvents
  const margin = options.safetyMargin ?? defaults.safetyMargin
  const skew = options.skewAllowanceMs ?? defaults.skewAllowanceMs
  const maxLockWait = options.maxLockWaitMs ?? 15 * 60 * 1000
  const start = yield* Clock.currentTimeMillis

  let batch: Array<PendingWaiter> | undefined
  let nextId = 0
  const ids = new WeakMap<Core.Ticket, number>()
  const grants: Array<{ id: number; key: string; limit: number; windowMs: number; at: number }> = []
  const completions: Array<{ id: number; at: number }> = []
  const unlocked: Array<{ key: string; at: number }> = []

  const core = new Core.SchedulerCore(start, {
    maxInFlight: options.maxInFlight ?? defaults.maxInFlight,
    onGrant: (ticket) => {
      const id = ++nextId
      ids.set(ticket, id)
      grants.push({ id, key: ticket.key.key, limit: ticket.key.limit, windowMs: ticket.key.windowMs, at: ticket.grantedAt })
    },
    onUnlock: (s, at) => void unlocked.push({ key: s.key, at })
  })

  const limitOf = (op: BudgetKey["operation"]) => {
    const o = options.overrides?.[`${op.family}:${op.path}`] ?? options.overrides?.[op.path] ?? op.rateLimit
    return { limit: Math.max(1, o.requests - margin), windowMs: Math.round(o.windowSeconds * 1000) }
  }

  // Restore what the last process knew: locks and calls still inside their windows.
  const persisted = yield* store.load(start).pipe(
    Effect.catch((e) => Effect.logWarning("rate-limit store could not be read; starting with empty budgets", e).pipe(Effect.as([])))
  )
  for (const p of persisted) {
    const s = core.keyState(p.key, Math.max(1, p.limit), p.windowMs)
    core.lock(s, p.lockedUntil)
    for (const at of [...p.completions].sort((a, b) => a - b)) core.restoreCompletion(p.key, s.limit, s.windowMs, at)
  }

  // Locks received by other processes sharing the store: held like our own. A key this
  // limiter does not track yet gets its lock when it is first used.
  const remoteLocks = new Map<string, number>()
  const holdRemote = (s: Core.KeyState) => {
    const until = remoteLocks.get(s.key)
    if (until === undefined) return
    remoteLocks.delete(s.key)
    core.lock(s, until)
  }

  // The timer fiber sleeps until the next window slot or lock end, or until poked.
  let poke = Deferred.makeUnsafe<void>()
  let armedFor = Infinity

  const flush = Effect.suspend(() => {
    if (grants.length === 0 && completions.length === 0) return Effect.void
    const write = { grants: grants.splice(0), completions: completions.splice(0) }
    return store.write(write).pipe(
      Effect.catch((e) => Effect.logWarning("rate-limit store write failed; budget state after a restart may be short", e))
    )
  })

  /** Grants what can be granted, persists the grants, then lets those calls go. */
  const pump: Effect.Effect<void> = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const granted: Array<PendingWaiter> = []
    batch = granted
    core.dispatch(now)
    batch = undefined
    yield* flush
    for (const u of unlocked.splice(0)) {
      const event = released(u)
      if (event !== undefined) yield* events.emit(event)
    }
    for (const w of granted) {
      w.ready = true
      w.resume?.(w.ticket!)
    }
    const wake = core.nextWake()
    if (wake < armedFor) {
      armedFor = wake
      Deferred.doneUnsafe(poke, Effect.void)
    }
  })

  // Not a Schedule: each wait is computed from the core's next wake and cut short by a poke.
  const tick = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const wake = core.nextWake()
    armedFor = wake
    const current = poke
    const delay = wake === Infinity ? 60_000 : Math.max(0, wake - now)
    yield* Effect.raceFirst(Effect.sleep(delay), Deferred.await(current))
    if (current === poke) poke = Deferred.makeUnsafe<void>()
    yield* pump
  })

  const swept = { keys: 0, calls: 0, waitMs: 0, locks: 0 }
  const sweep = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const before = [...core.keys.values()]
    const removed = core.sweep(now)
    if (removed === 0) return
    for (const s of before) {
      if (core.keys.get(s.key) === s) continue
      swept.keys++
      swept.calls += s.calls
      swept.waitMs += s.waitMs
      swept.locks += s.locks
    }
    for (const u of unlocked.splice(0)) {
      const event = released(u)
      if (event !== undefined) yield* events.emit(event)
    }
    yield* Effect.logDebug(`rate limiter: forgot ${removed} idle key(s)`)
  }).pipe(
    // A failed sweep is logged and the next one runs on time: the fiber never dies quietly.
    Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("rate-limit sweep failed", cause))
  )

  // Finalizers run last-in first-out: both fibers are interrupted, then the last grants and
  // completions are written.
  yield* Effect.addFinalizer(() => flush)
  yield* Effect.forkScoped(Effect.forever(tick))
  if (store.remoteLocks !== undefined) {
    yield* Effect.forkScoped(Stream.runForEach(store.remoteLocks, ({ key, until }) =>
      Effect.suspend(() => {
        const s = core.keys.get(key)
        if (s === undefined) remoteLocks.set(key, Math.max(until, remoteLocks.get(key) ?? 0))
        else core.lock(s, until)
        return pump
      })))
  }
  if (store.remoteCalls !== undefined) {
    // Another process's call spends this key's budget here too. It only ever delays a grant,
    // so nothing needs to be dispatched; the next wake is computed with it.
    yield* Effect.forkScoped(Stream.runForEach(store.remoteCalls, ({ at, key, limit, windowMs }) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const s = core.keys.get(key)
        const window = s?.windowMs ?? windowMs
        // Out of the window already (a call replayed from long ago): it spends nothing.
        if (at <= now - window - 1) return
        core.restoreCompletion(key, s?.limit ?? Math.max(1, limit), window, at)
      })))
  }
  yield* Effect.forkScoped(Effect.schedule(sweep, Schedule.spaced(options.sweepIntervalMs ?? 60_000)))

  const awaitGrant = (s: Core.KeyState, waiter: PendingWaiter) =>
    Effect.callback<Core.Ticket>((resume) => {
      if (waiter.ready) {
        resume(Effect.succeed(waiter.ticket!))
        return
      }
      waiter.resume = (ticket) => resume(Effect.succeed(ticket))
      return Effect.suspend(() => {
        // Interrupted while waiting: leave the queue; a slot granted meanwhile is given back.
        const ticket = core.cancel(s, waiter)
        if (ticket === undefined) return Effect.void
        return Effect.flatMap(Clock.currentTimeMillis, (now) => {
          core.release(ticket, now, false)
          return pump
        })
      })
    })

  const release = (ticket: Core.Ticket, sent: boolean) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (ticket.released) return Effect.void
      core.release(ticket, now, sent)
      const id = ids.get(ticket)
      if (sent && id !== undefined) completions.push({ id, at: now })
      return pump
    })

  const withPermit = <A, E, R>(key: BudgetKey, priority: Priority, use: (permit: Permit) => Effect.Effect<A, E, R>) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const k = keyString(key)
        const { limit, windowMs } = limitOf(key.operation)
        const s = core.keyState(k, limit, windowMs)
        holdRemote(s)
        if (s.lockedUntil - now > maxLockWait) {
          return yield* new LockWaitExceeded({
            key: k,
            lockedUntil: s.lockedUntil,
            message: `${k} is locked until ${new Date(s.lockedUntil).toISOString()}, longer than the allowed wait`
          })
        }
        const waiter: PendingWaiter = {
          grant: (ticket) => {
            waiter.ticket = ticket
            batch?.push(waiter)
          },
          priority: priorities[priority],
          enqueuedAt: now,
          cancelled: false,
          ticket: undefined,
          ready: false,
          resume: undefined
        }
        core.enqueue(s, waiter)
        yield* pump
        // The wait for a slot is its own span: a slow minute shows where it went.
        const ticket = yield* restore(awaitGrant(s, waiter)).pipe(
          Effect.withSpan("RateLimiter.grant", { attributes: { "ocs.operation": key.operation.path, "ocs.priority": priority } })
        )
        let sent = true
        const permit: Permit = { key: k, grantedAt: ticket.grantedAt, markNotSent: () => (sent = false) }
        return yield* restore(use(permit)).pipe(Effect.ensuring(Effect.suspend(() => release(ticket, sent))))
      })
    )

  const lock = (key: BudgetKey, info: { readonly lockedSeconds?: number | undefined; readonly unlockedAt?: number | undefined; readonly receivedAt: number }) =>
    Effect.gen(function*() {
      const k = keyString(key)
      const { limit, windowMs } = limitOf(key.operation)
      const s = core.keyState(k, limit, windowMs)
      holdRemote(s)
      // docs/api-catalogue.md, §11 Errors: locked until unlockedAt; we also honour receipt + lockedSeconds, whichever
      // is later, then add the skew allowance (our clock and the service's may differ).
      const byUnlockedAt = info.unlockedAt === undefined ? 0 : info.unlockedAt * 1000
      const byLockedSeconds = info.lockedSeconds === undefined ? 0 : info.receivedAt + info.lockedSeconds * 1000
      const fallback = info.unlockedAt === undefined && info.lockedSeconds === undefined ? info.receivedAt + windowMs : 0
      const until = Math.max(byUnlockedAt, byLockedSeconds, fallback) + skew
      core.lock(s, until)
      yield* store.lock(k, s.lockedUntil).pipe(Effect.catch((e) => Effect.logWarning("rate-limit lock not persisted", e)))
      yield* pump
      return s.lockedUntil
    })

  const lockedUntil = (key: BudgetKey) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const k = keyString(key)
      const s = core.keys.get(k)
      const until = Math.max(s?.lockedUntil ?? 0, remoteLocks.get(k) ?? 0)
      return until > now ? Option.some(until) : Option.none()
    })

  const metrics = Effect.map(Clock.currentTimeMillis, (now) =>
    [...core.keys.values()].map((s): KeyMetrics => ({
      key: s.key,
      limit: s.limit,
      windowMs: s.windowMs,
      calls: s.calls,
      waitMs: s.waitMs,
      locks: s.locks,
      queueDepth: s.waiting,
      inFlight: s.inFlight,
      lockedUntil: s.lockedUntil > now ? s.lockedUntil : undefined,
      recentCalls: core.recent(s, now).length
    }))
  )

  const totals = Effect.sync((): Totals => {
    let calls = swept.calls
    let waitMs = swept.waitMs
    let locks = swept.locks
    for (const s of core.keys.values()) {
      calls += s.calls
      waitMs += s.waitMs
      locks += s.locks
    }
    return { keys: core.keys.size, swept: swept.keys, calls, waitMs, locks }
  })

  return RateLimiter.of({ withPermit, lock, lockedUntil, metrics, totals, limitOf })
})
