/**
 * Failed verify-token checks per application and source address, so that a source that keeps
 * failing is answered 429 before its body is read (no read, no scan, no parse). A fixed window
 * per key: `limit` failures inside `windowMillis` of the first one block the key until that
 * window ends.
 *
 * Bounded in memory: a Map in insertion order used as an LRU (a key is moved to the end when
 * it fails again), the oldest dropped past `maxEntries`. Dropping a key only forgets failures,
 * so a flood of spoofed sources can at worst unblock a source early, never block a good one.
 * Plain mutable state: it sits on the hot path of every delivery, like the metrics.
 */

export interface Settings {
  /** Failures that block a key; 0 turns the throttle off. */
  readonly limit: number
  readonly windowMillis: number
  readonly maxEntries: number
}

export const defaults: Settings = { limit: 20, windowMillis: 60_000, maxEntries: 10_000 }

interface Entry {
  windowStart: number
  failures: number
}

export interface AuthFailures {
  /** Seconds until the key may deliver again (for `retry-after`), or 0 when it is not blocked. */
  readonly blockedFor: (appId: string, client: string, now: number) => number
  readonly failed: (appId: string, client: string, now: number) => void
  readonly size: () => number
}

export const make = (settings: Settings): AuthFailures => {
  const entries = new Map<string, Entry>()
  const keyOf = (appId: string, client: string) => `${appId} ${client}`
  return {
    blockedFor: (appId, client, now) => {
      if (settings.limit <= 0 || entries.size === 0) return 0
      const e = entries.get(keyOf(appId, client))
      if (e === undefined || e.failures < settings.limit) return 0
      const left = e.windowStart + settings.windowMillis - now
      return left > 0 ? Math.ceil(left / 1000) : 0
    },
    failed: (appId, client, now) => {
      if (settings.limit <= 0) return
      const key = keyOf(appId, client)
      const e = entries.get(key)
      if (e !== undefined) entries.delete(key)
      const entry = e === undefined || now - e.windowStart >= settings.windowMillis ? { windowStart: now, failures: 0 } : e
      entry.failures++
      entries.set(key, entry)
      if (entries.size > settings.maxEntries) entries.delete(entries.keys().next().value!)
    },
    size: () => entries.size
  }
}
