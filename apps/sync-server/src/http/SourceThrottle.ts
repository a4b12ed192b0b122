/**
 * Failed attempts per source address (a wrong admin key, a wrong console sign-in), so that a
 * source guessing keys is slowed down without locking anyone else out: `limit` failures within
 * `windowMs` block that source until the oldest of them is `windowMs` old.
 *
 * Bounded in memory: at most `limit` times per source, and a Map in insertion order used as an
 * LRU (a source is moved to the end when it fails again), the oldest dropped past
 * `maxEntries`. Dropping a source only forgets its failures: a flood of sources can at worst
 * unblock one early, never block another.
 */

export interface Settings {
  /** Failures that block a source; 0 turns the throttle off. */
  readonly limit: number
  readonly windowMs: number
  readonly maxEntries?: number | undefined
}

export interface SourceThrottle {
  /** Seconds until `source` may try again (for `retry-after`), 0 when it may now. */
  readonly blockedFor: (source: string, now: number) => number
  readonly failed: (source: string, now: number) => void
  readonly size: () => number
}

export const make = (settings: Settings): SourceThrottle => {
  const maxEntries = settings.maxEntries ?? 10_000
  const entries = new Map<string, Array<number>>()
  return {
    blockedFor: (source, now) => {
      if (settings.limit <= 0) return 0
      const times = entries.get(source)
      if (times === undefined || times.length < settings.limit) return 0
      const left = times[times.length - settings.limit]! + settings.windowMs - now
      return left > 0 ? Math.ceil(left / 1000) : 0
    },
    failed: (source, now) => {
      if (settings.limit <= 0) return
      const times = (entries.get(source) ?? []).filter((t) => now - t < settings.windowMs)
      entries.delete(source)
      times.push(now)
      if (times.length > settings.limit) times.splice(0, times.length - settings.limit)
      entries.set(source, times)
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!)
    },
    size: () => entries.size
  }
}
