/**
 * Rate limits (docs/api-catalogue.md, Limits): a budget of `limit` calls in any span of `windowMs` (a sliding
 * window, so a client that bursts at the edges of fixed windows is caught), per appId +
 * businessId + URL. The call over budget locks the key for `lockMs`; every call during the
 * lock extends it by `lockGrowthMs` (capped at `maxLockMs` from the lock's start); the lock
 * ends at its end time, and the window then starts empty. Other keys are unaffected.
 *
 * Time: the limiter uses real milliseconds. A compressed test shortens `windowMs` and
 * `lockMs` instead of scaling the clock, so `unlockedAt` stays a true unix time that any
 * client can honour. Reported values are rounded up (lockedSeconds = ceil of the remaining
 * time, unlockedAt = ceil of the end), so a client waiting until unlockedAt never arrives
 * during the lock; with `fractionalSeconds` they carry milliseconds as decimals instead.
 */

export interface OperationLimit {
  readonly limit?: number | undefined
  readonly windowMs?: number | undefined
}

export interface RateLimitConfig {
  readonly enabled: boolean
  readonly limit: number
  readonly windowMs: number
  readonly lockMs: number
  readonly lockGrowthMs: number
  readonly maxLockMs: number
  readonly fractionalSeconds: boolean
  /** Overrides by operation key ("product/list"). */
  readonly operations: { readonly [operation: string]: OperationLimit }
}

/** Any subset of the settings, as options and the control API take them. */
export type RateLimitPatch = Partial<RateLimitConfig>

export const defaultRateLimitConfig: RateLimitConfig = {
  enabled: true,
  limit: 150,
  windowMs: 30_000,
  lockMs: 30_000,
  lockGrowthMs: 15_000,
  maxLockMs: 600_000,
  fractionalSeconds: false,
  operations: {}
}

interface KeyState {
  /** Ring buffer of the accepted calls' times. */
  readonly times: Float64Array
  head: number
  count: number
  lockStart: number
  lockedUntil: number
}

export type Verdict =
  | { readonly allowed: true; readonly locked: false }
  | {
    readonly allowed: false
    /** Whether the key was already locked when the call arrived. */
    readonly locked: boolean
    readonly lockedSeconds: number
    readonly unlockedAt: number
    readonly lockedUntilMs: number
  }

const ALLOWED: Verdict = { allowed: true, locked: false }

export class RateLimiter {
  config: RateLimitConfig
  private readonly keys = new Map<string, KeyState>()

  constructor(config: RateLimitConfig) {
    this.config = config
  }

  configure(config: RateLimitConfig): void {
    this.config = config
    this.keys.clear()
  }

  reset(): void {
    this.keys.clear()
  }

  private limitFor(operation: string, declared: OperationLimit | undefined): { limit: number; windowMs: number } {
    const override = this.config.operations[operation]
    return {
      limit: override?.limit ?? declared?.limit ?? this.config.limit,
      windowMs: override?.windowMs ?? declared?.windowMs ?? this.config.windowMs
    }
  }

  /** Whether the key is locked at `now` (for the call log; no side effect). */
  isLocked(key: string, now: number): boolean {
    const state = this.keys.get(key)
    return state !== undefined && state.lockedUntil > now
  }

  check(key: string, operation: string, declared: OperationLimit | undefined, now: number): Verdict {
    if (!this.config.enabled) return ALLOWED
    const { limit, windowMs } = this.limitFor(operation, declared)
    let state = this.keys.get(key)
    if (state === undefined || state.times.length !== limit) {
      state = { times: new Float64Array(Math.max(1, limit)), head: 0, count: 0, lockStart: 0, lockedUntil: 0 }
      this.keys.set(key, state)
    }
    if (state.lockedUntil > 0) {
      if (now < state.lockedUntil) {
        // docs/api-catalogue.md, States, "Further calls while locked": lockedSeconds and unlockedAt increase
        state.lockedUntil = Math.min(state.lockedUntil + this.config.lockGrowthMs, state.lockStart + this.config.maxLockMs)
        return this.denied(state, now, true)
      }
      state.lockedUntil = 0
      state.count = 0
      state.head = 0
    }
    if (state.count < limit) {
      state.times[(state.head + state.count) % limit] = now
      state.count++
      return ALLOWED
    }
    const oldest = state.times[state.head]!
    if (oldest <= now - windowMs) {
      state.times[state.head] = now
      state.head = (state.head + 1) % limit
      return ALLOWED
    }
    state.lockStart = now
    state.lockedUntil = now + this.config.lockMs
    return this.denied(state, now, false)
  }

  /**
   * Locks the key now, as the call over budget does (a forced 429): the lock starts afresh
   * unless one is running, in which case the call extends it like any call during a lock.
   */
  lockNow(key: string, now: number): Verdict & { readonly allowed: false } {
    let state = this.keys.get(key)
    if (state === undefined) {
      state = { times: new Float64Array(Math.max(1, this.config.limit)), head: 0, count: 0, lockStart: 0, lockedUntil: 0 }
      this.keys.set(key, state)
    }
    if (state.lockedUntil > now) {
      state.lockedUntil = Math.min(state.lockedUntil + this.config.lockGrowthMs, state.lockStart + this.config.maxLockMs)
      return this.denied(state, now, true)
    }
    state.lockStart = now
    state.lockedUntil = now + this.config.lockMs
    return this.denied(state, now, false)
  }

  private denied(state: KeyState, now: number, locked: boolean): Verdict & { readonly allowed: false } {
    const remaining = state.lockedUntil - now
    return this.config.fractionalSeconds
      ? {
        allowed: false,
        locked,
        lockedSeconds: Math.ceil(remaining) / 1000,
        unlockedAt: Math.ceil(state.lockedUntil) / 1000,
        lockedUntilMs: state.lockedUntil
      }
      : {
        allowed: false,
        locked,
        lockedSeconds: Math.max(1, Math.ceil(remaining / 1000)),
        unlockedAt: Math.ceil(state.lockedUntil / 1000),
        lockedUntilMs: state.lockedUntil
      }
  }

  /** Current locks, for the control API. */
  locks(now: number): ReadonlyArray<{ readonly key: string; readonly lockedUntilMs: number }> {
    const out: Array<{ key: string; lockedUntilMs: number }> = []
    for (const [key, state] of this.keys) if (state.lockedUntil > now) out.push({ key, lockedUntilMs: state.lockedUntil })
    return out
  }
}
