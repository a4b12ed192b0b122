/**
 * Time series for the operator console's charts (docs/architecture.md §4.35): what the server
 * did over the last hour and the last day, kept in memory in fixed rings of buckets, so that a
 * chart drawn after a reload shows history and the memory never grows with time.
 *
 * A sampler reads cumulative counters (webhooks accepted, pages pulled, calls...) and levels
 * (projection lag, plugin lag) every few seconds; a counter's increase since the last reading
 * is added to the bucket of now, a level is kept as the bucket's highest reading. Buckets no
 * reading reached (the server was down) read `null`, not 0.
 *
 * Labels are tenant-free, as the metrics' are (./ServerMetrics.ts). Per-tenant and per-key
 * series live in `Bounded` groups: a fixed number of members, the least recently active
 * evicted first, and a member made only when something happened to it, so that 10,000 idle
 * tenants cost nothing.
 */
import { Clock, Effect, Schedule } from "effect"

/** One ring: `points` buckets of `stepMs` each. */
export interface Resolution {
  readonly stepMs: number
  readonly points: number
}

/** The console's two ranges for the server as a whole: 10 s for an hour, 1 min for a day. */
export const serverRanges = {
  hour: { stepMs: 10_000, points: 360 },
  day: { stepMs: 60_000, points: 1440 }
} as const satisfies Record<string, Resolution>

/** Per tenant, coarser (a tenant's activity is sparse): 1 min for an hour, 10 min for a day. */
export const tenantRanges = {
  hour: { stepMs: 60_000, points: 60 },
  day: { stepMs: 600_000, points: 144 }
} as const satisfies Record<string, Resolution>

/** Per rate-limit key: budget use over the last hour, 30 s buckets. */
export const keyRanges = { hour: { stepMs: 30_000, points: 120 } } as const satisfies Record<string, Resolution>

export type Ranges = Readonly<Record<string, Resolution>>

/** `count`: increases summed per bucket; `level`: the bucket's highest reading. */
export type Kind = "count" | "level"

/** A series as the admin API answers it: `values[i]` is the bucket starting at `start + i * stepMs`. */
export interface Window {
  readonly stepMs: number
  readonly start: number
  readonly values: ReadonlyArray<number | null>
}

/** A ring of buckets; a slot remembers which bucket it holds, so stale slots read as empty. */
class Ring {
  private readonly values: Float64Array
  private readonly buckets: Float64Array
  readonly resolution: Resolution
  constructor(resolution: Resolution) {
    this.resolution = resolution
    this.values = new Float64Array(resolution.points)
    this.buckets = new Float64Array(resolution.points).fill(-1)
  }
  put(at: number, value: number, kind: Kind) {
    const bucket = Math.floor(at / this.resolution.stepMs)
    const slot = bucket % this.resolution.points
    if (this.buckets[slot] !== bucket) {
      // A bucket older than the slot's holds nothing worth keeping (time went back): ignore it.
      if (this.buckets[slot]! > bucket) return
      this.buckets[slot] = bucket
      this.values[slot] = value
      return
    }
    this.values[slot] = kind === "count" ? this.values[slot]! + value : Math.max(this.values[slot]!, value)
  }
  window(now: number): Window {
    const { points, stepMs } = this.resolution
    const last = Math.floor(now / stepMs)
    const first = last - points + 1
    const values: Array<number | null> = []
    for (let b = first; b <= last; b++) {
      const slot = ((b % points) + points) % points
      values.push(this.buckets[slot] === b ? this.values[slot]! : null)
    }
    return { stepMs, start: first * stepMs, values }
  }
}

/** Named series over the same ranges; a name is made on its first reading. */
export class SeriesSet {
  private readonly series = new Map<string, { readonly kind: Kind; readonly rings: Readonly<Record<string, Ring>> }>()
  readonly ranges: Ranges
  constructor(ranges: Ranges) {
    this.ranges = ranges
  }
  put(name: string, kind: Kind, at: number, value: number) {
    let s = this.series.get(name)
    if (s === undefined) {
      s = { kind, rings: Object.fromEntries(Object.entries(this.ranges).map(([range, r]) => [range, new Ring(r)])) }
      this.series.set(name, s)
    }
    for (const ring of Object.values(s.rings)) ring.put(at, value, s.kind)
  }
  /** Every series over `range` ending at `now`; undefined for a range it does not keep. */
  read(range: string, now: number): { readonly stepMs: number; readonly start: number; readonly series: Record<string, ReadonlyArray<number | null>> } | undefined {
    const resolution = this.ranges[range]
    if (resolution === undefined) return undefined
    const series: Record<string, ReadonlyArray<number | null>> = {}
    let start = Math.floor(now / resolution.stepMs) * resolution.stepMs - (resolution.points - 1) * resolution.stepMs
    for (const [name, s] of this.series) {
      const w = s.rings[range]!.window(now)
      start = w.start
      series[name] = w.values
    }
    return { stepMs: resolution.stepMs, start, series }
  }
  get names(): ReadonlyArray<string> {
    return [...this.series.keys()]
  }
}

/**
 * Series per member (a tenant, a budget key), at most `max` members: a new member past the
 * bound evicts the one whose last activity is oldest.
 */
export class Bounded {
  private readonly members = new Map<string, SeriesSet>()
  readonly ranges: Ranges
  readonly max: number
  constructor(ranges: Ranges, max: number) {
    this.ranges = ranges
    this.max = max
  }
  /** Records a reading of `id`; a member is made only for a non-zero reading. */
  put(id: string, name: string, kind: Kind, at: number, value: number) {
    let set = this.members.get(id)
    if (set === undefined) {
      if (value === 0) return
      set = new SeriesSet(this.ranges)
      if (this.members.size >= this.max) this.members.delete(this.members.keys().next().value!)
    } else if (value !== 0) {
      // Most recently active last: the Map's order is the eviction order.
      this.members.delete(id)
    }
    this.members.set(id, set)
    set.put(name, kind, at, value)
  }
  get(id: string): SeriesSet | undefined {
    return this.members.get(id)
  }
  get size() {
    return this.members.size
  }
  ids(): ReadonlyArray<string> {
    return [...this.members.keys()]
  }
}

/** What a sampler reads: cumulative counters and levels, for the server and per member. */
export interface Reading {
  readonly counters: Readonly<Record<string, number>>
  readonly levels: Readonly<Record<string, number>>
  /** Per tenant (`appId:businessId`): cumulative counters. */
  readonly tenants?: ReadonlyMap<string, Readonly<Record<string, number>>> | undefined
  /** Per budget key: levels (e.g. the share of the budget used, 0..1). */
  readonly keys?: ReadonlyMap<string, Readonly<Record<string, number>>> | undefined
}

export interface Options {
  readonly server?: Ranges | undefined
  readonly tenant?: Ranges | undefined
  readonly key?: Ranges | undefined
  /** Tenants with series kept at once (default 1000). */
  readonly maxTenants?: number | undefined
  /** Budget keys with series kept at once (default 1000). */
  readonly maxKeys?: number | undefined
}

/** The increase of a cumulative counter; a counter that went down (a restart) counts from 0. */
const increase = (now: number, before: number | undefined) => before === undefined ? 0 : now >= before ? now - before : now

/** The console's series: the server's, per tenant and per key, fed by `record`. */
export class Store {
  readonly server: SeriesSet
  readonly tenants: Bounded
  readonly keys: Bounded
  private previous: Readonly<Record<string, number>> | undefined
  private readonly previousTenants = new Map<string, Readonly<Record<string, number>>>()
  private seenTenants = false
  constructor(options: Options = {}) {
    this.server = new SeriesSet(options.server ?? serverRanges)
    this.tenants = new Bounded(options.tenant ?? tenantRanges, options.maxTenants ?? 1000)
    this.keys = new Bounded(options.key ?? keyRanges, options.maxKeys ?? 1000)
  }
  /**
   * Adds a reading taken at `at`. The first reading is the baseline of the counters (it adds
   * 0); each later one adds the increase since the one before.
   */
  record(reading: Reading, at: number) {
    for (const [name, value] of Object.entries(reading.counters)) this.server.put(name, "count", at, increase(value, this.previous?.[name]))
    this.previous = reading.counters
    for (const [name, value] of Object.entries(reading.levels)) this.server.put(name, "level", at, value)
    if (reading.tenants !== undefined) {
      for (const [id, counters] of reading.tenants) {
        const before = this.previousTenants.get(id)
        // A tenant first seen after the first reading started from nothing: all it counted is new.
        const from = before === undefined && this.seenTenants ? 0 : undefined
        for (const [name, value] of Object.entries(counters)) this.tenants.put(id, name, "count", at, increase(value, before?.[name] ?? from))
        this.previousTenants.set(id, counters)
      }
      // Tenants gone from the reading (removed) are forgotten as baselines.
      if (this.previousTenants.size > reading.tenants.size) {
        for (const id of this.previousTenants.keys()) if (!reading.tenants.has(id)) this.previousTenants.delete(id)
      }
      this.seenTenants = true
    }
    if (reading.keys !== undefined) {
      for (const [id, levels] of reading.keys) {
        for (const [name, value] of Object.entries(levels)) this.keys.put(id, name, "level", at, value)
      }
    }
  }
}

/**
 * Samples `read` into `store` now and then every `every` (Effect's Clock, so a test moves
 * time with `TestClock`). A failed reading is logged and skipped: a gap in a chart, never a
 * stopped sampler.
 */
export const run = <E, R>(store: Store, read: Effect.Effect<Reading, E, R>, every: Parameters<typeof Schedule.spaced>[0]) =>
  Effect.gen(function*() {
    const reading = yield* read
    store.record(reading, yield* Clock.currentTimeMillis)
  }).pipe(
    Effect.catchCause((cause) => Effect.logWarning("console series: a reading failed", cause)),
    Effect.repeat(Schedule.spaced(every)),
    Effect.asVoid
  )
