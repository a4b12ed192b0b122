/**
 * The writer thread's in-memory dedupe index: for every (tenant, dedupeKey) received within the
 * window, the offset and receivedAt of its latest record, under a 64-bit digest of the pair.
 *
 * Why in memory: dedupe keys are digests, so a B-tree index on them takes each insert to a
 * random page, and every such page is written to the WAL at each commit (a 4 KiB page per
 * record; measured: 22 of 32 µs per appended record). The index here costs a hash probe, and
 * the records table stays the only truth: a digest match is confirmed by reading the record
 * at that offset (so a digest collision can never turn a new fact into a "duplicate").
 *
 * Layout: open addressing with linear probing over typed arrays (24 bytes a slot, at most
 * 3/4 full), no per-entry objects for the collector to walk. Entries older than the window
 * behind the newest receivedAt are dropped whenever the table is resized; `horizon` says
 * from when the index is complete, and a lookup reaching further back must ask SQLite.
 *
 * Pure and synchronous; the writer (./writer.worker.ts) owns it and stages the entries of a
 * transaction until it commits.
 */
import * as Crypto from "node:crypto"

/** A 64-bit digest of the pair, as two unsigned 32-bit halves. */
export interface Digest {
  readonly hi: number
  readonly lo: number
}

const fmix = (h: number): number => {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/**
 * A seeded 64-bit digest of (tenant, dedupeKey): two 32-bit multiply-rotate lanes over the
 * UTF-16 code units, each finished with murmur3's avalanche. Not cryptographic and need not
 * be: a match is always confirmed against the record, so a collision costs one extra read,
 * never a false duplicate. The seed is drawn per digester (per writer thread), so the slots
 * that keys land in cannot be predicted from outside. About 0.1 µs for a 100-character pair,
 * against 1.2 µs for SHA-256 (measured in the writer's profile).
 */
export const makeDigester = (seed: Uint32Array = Crypto.getRandomValues(new Uint32Array(2))) => {
  const seedHi = seed[0]! >>> 0
  const seedLo = seed[1]! >>> 0
  return (tenant: string, dedupeKey: string): Digest => {
    let h1 = seedHi
    let h2 = seedLo
    // The code units of the tenant, a separator no code unit can equal (so that ("a", "bc")
    // and ("ab", "c") differ), then those of the key.
    const t = tenant.length
    const end = t + 1 + dedupeKey.length
    for (let i = 0; i < end; i++) {
      const c = i < t ? tenant.charCodeAt(i) : i === t ? 0x10000 : dedupeKey.charCodeAt(i - t - 1)
      h1 = Math.imul(h1 ^ c, 0xcc9e2d51)
      h1 = (h1 << 15) | (h1 >>> 17)
      h2 = Math.imul(h2 ^ c, 0x1b873593)
      h2 = (h2 << 13) | (h2 >>> 19)
    }
    const n = tenant.length + dedupeKey.length
    h1 = fmix(h1 ^ n)
    h2 = fmix(h2 ^ n ^ h1)
    return { hi: fmix(h1 ^ h2), lo: h2 }
  }
}

export interface Entry {
  readonly offset: number
  readonly receivedAt: number
}

const MIN_CAPACITY = 1024

export class DedupeIndex {
  private hi: Uint32Array
  private lo: Uint32Array
  /** 0: empty slot (offsets start at 1). */
  private offsets: Float64Array
  private received: Float64Array
  private mask: number
  private count = 0
  private newest = Number.NEGATIVE_INFINITY
  /** Every entry with receivedAt >= horizon is in the table. */
  horizon: number

  readonly windowMillis: number

  constructor(windowMillis: number, horizon: number, capacity = MIN_CAPACITY) {
    this.windowMillis = windowMillis
    const size = Math.max(MIN_CAPACITY, 2 ** Math.ceil(Math.log2(capacity)))
    this.hi = new Uint32Array(size)
    this.lo = new Uint32Array(size)
    this.offsets = new Float64Array(size)
    this.received = new Float64Array(size)
    this.mask = size - 1
    this.horizon = horizon
  }

  get size(): number {
    return this.count
  }

  get capacity(): number {
    return this.mask + 1
  }

  /** Entries whose digest equals `d`, in probe order (usually none or one). */
  candidates(d: Digest): Array<Entry> {
    const out: Array<Entry> = []
    for (let i = d.lo & this.mask; this.offsets[i] !== 0; i = (i + 1) & this.mask) {
      if (this.hi[i] === d.hi && this.lo[i] === d.lo) out.push({ offset: this.offsets[i]!, receivedAt: this.received[i]! })
    }
    return out
  }

  /**
   * Records `entry` for its pair. `replaces`: the offset of the pair's previous entry (confirmed
   * by the caller), which is overwritten; otherwise a new slot is taken.
   */
  put(d: Digest, entry: Entry, replaces: number | undefined): void {
    if (entry.receivedAt > this.newest) this.newest = entry.receivedAt
    if (replaces !== undefined) {
      for (let i = d.lo & this.mask; this.offsets[i] !== 0; i = (i + 1) & this.mask) {
        if (this.offsets[i] === replaces && this.hi[i] === d.hi && this.lo[i] === d.lo) {
          this.offsets[i] = entry.offset
          this.received[i] = Math.max(this.received[i]!, entry.receivedAt)
          return
        }
      }
    }
    if ((this.count + 1) * 4 > this.capacity * 3) this.resize()
    this.insert(d.hi, d.lo, entry.offset, entry.receivedAt)
  }

  private insert(hi: number, lo: number, offset: number, receivedAt: number): void {
    let i = lo & this.mask
    while (this.offsets[i] !== 0) i = (i + 1) & this.mask
    this.hi[i] = hi
    this.lo[i] = lo
    this.offsets[i] = offset
    this.received[i] = receivedAt
    this.count++
  }

  /** Drops what left the window, then grows if the rest still fills more than half. */
  private resize(): void {
    const cutoff = this.newest - this.windowMillis
    const { hi, lo, offsets, received } = this
    let kept = 0
    for (let i = 0; i < offsets.length; i++) if (offsets[i] !== 0 && received[i]! >= cutoff) kept++
    const size = Math.max(MIN_CAPACITY, 2 ** Math.ceil(Math.log2((kept + 1) * 2)))
    this.hi = new Uint32Array(size)
    this.lo = new Uint32Array(size)
    this.offsets = new Float64Array(size)
    this.received = new Float64Array(size)
    this.mask = size - 1
    this.count = 0
    for (let i = 0; i < offsets.length; i++) {
      if (offsets[i] !== 0 && received[i]! >= cutoff) this.insert(hi[i]!, lo[i]!, offsets[i]!, received[i]!)
    }
    if (cutoff > this.horizon) this.horizon = cutoff
  }
}
