/**
 * One table of seeded records: record `pos` is derived from (seed, pos) on demand and only
 * mutations are kept, so a business of 1,000,000 products starts instantly and costs memory
 * only for what changed. Ids grow with the position, so "order by id" is "order by position".
 */

/**
 * One table: seeded records by position plus a map of changes. `null` in the map means
 * deleted. Positions at or past `seeded` exist only in the map (records added later).
 */
export class Table<R> {
  readonly base: bigint
  readonly seeded: number
  private readonly generate: (pos: number) => R | undefined
  readonly changes = new Map<number, R | null>()
  private appended = 0
  /** Bumped by every mutation; sorted indexes are rebuilt when it changes. */
  version = 0

  constructor(base: bigint, seeded: number, generate: (pos: number) => R | undefined) {
    this.base = base
    this.seeded = seeded
    this.generate = generate
  }

  get positions(): number {
    return this.seeded + this.appended
  }

  at(pos: number): R | undefined {
    if (this.changes.size > 0) {
      const changed = this.changes.get(pos)
      if (changed !== undefined) return changed ?? undefined
    }
    return pos < this.seeded ? this.generate(pos) : undefined
  }

  /** The record as seeded, whatever changed since (historic documents quote it). */
  seededAt(pos: number): R | undefined {
    return pos < this.seeded ? this.generate(pos) : undefined
  }

  idAt(pos: number): bigint {
    return this.base + BigInt(pos)
  }

  posOf(id: bigint): number | undefined {
    const pos = id - this.base
    return pos >= 0n && pos < BigInt(this.positions) ? Number(pos) : undefined
  }

  get(id: bigint): R | undefined {
    const pos = this.posOf(id)
    return pos === undefined ? undefined : this.at(pos)
  }

  set(pos: number, record: R | null): void {
    this.changes.set(pos, record)
    this.version++
  }

  append(make: (id: bigint, pos: number) => R): R {
    const pos = this.positions
    this.appended++
    const record = make(this.idAt(pos), pos)
    this.set(pos, record)
    return record
  }

  /** Live records (scans every position: for counts in the control API, not the hot path). */
  count(): number {
    let n = 0
    for (let pos = 0; pos < this.positions; pos++) if (this.at(pos) !== undefined) n++
    return n
  }
}

