/**
 * An append-only log numbered from 1 that keeps only its last `limit` entries, shared by the
 * call log and the delivery log so both answer `since`/`limit` queries the same way. The
 * oldest entries are dropped by moving a start index; the array is compacted now and then
 * (not on every add, which would make a full log cost O(limit) per entry).
 */
/** The filters both logs answer: after a seq, by tenant, by outcome, at most `limit`. */
export interface LogQuery {
  readonly since?: number | undefined
  readonly appId?: string | undefined
  readonly businessId?: string | undefined
  readonly outcome?: string | undefined
  readonly limit?: number | undefined
}

/** Whether `e` passes the tenant and outcome filters of `q`. */
export const matchesLogQuery = (
  q: LogQuery,
  e: { readonly appId: string | null; readonly businessId: string | null; readonly outcome: string }
): boolean =>
  (q.appId === undefined || e.appId === q.appId) &&
  (q.businessId === undefined || e.businessId === q.businessId) &&
  (q.outcome === undefined || e.outcome === q.outcome)

export class BoundedLog<E extends { readonly seq: number }> {
  private entries: Array<E> = []
  private start = 0
  private nextSeq = 1
  readonly limit: number

  constructor(limit: number) {
    this.limit = limit
  }

  /** The seq of the last entry ever added (0 before the first); survives `clear`. */
  get lastSeq(): number {
    return this.nextSeq - 1
  }

  add(entry: Omit<E, "seq">): E {
    const full = { ...entry, seq: this.nextSeq++ } as E
    this.entries.push(full)
    if (this.entries.length - this.start > this.limit) {
      this.start++
      if (this.start > 4096) {
        this.entries = this.entries.slice(this.start)
        this.start = 0
      }
    }
    return full
  }

  /** Entries after seq `since` that `matches` accepts, oldest first, at most `limit`. */
  select(
    q: { readonly since?: number | undefined; readonly limit?: number | undefined },
    matches: (entry: E) => boolean
  ): ReadonlyArray<E> {
    const out: Array<E> = []
    const limit = q.limit ?? Number.MAX_SAFE_INTEGER
    for (let i = this.start; i < this.entries.length && out.length < limit; i++) {
      const e = this.entries[i]!
      if (q.since !== undefined && e.seq <= q.since) continue
      if (matches(e)) out.push(e)
    }
    return out
  }

  clear(): void {
    this.entries = []
    this.start = 0
  }
}
