/**
 * Every API call the simulator receives, in arrival order, so a test can assert on what a
 * client really did (e.g. that no call arrived while its key was rate-locked). A bounded
 * ring: the oldest entries are dropped past `limit`.
 */

export interface CallEntry {
  readonly seq: number
  /** Arrival time, unix milliseconds. */
  readonly at: number
  readonly appId: string | null
  readonly businessId: string | null
  readonly family: string
  /** "product/list", or the raw path when it is not an operation. */
  readonly operation: string
  readonly path: string
  /** "ok", an errorCode (ERR_429, ...), or "fault:<kind>". */
  outcome: string
  status: number
  /** Whether the appId + businessId + URL key was rate-locked when the call arrived. */
  readonly locked: boolean
  durationMs: number
}

export interface CallQuery {
  readonly since?: number | undefined
  readonly sinceMs?: number | undefined
  readonly appId?: string | undefined
  readonly businessId?: string | undefined
  readonly operation?: string | undefined
  readonly outcome?: string | undefined
  readonly limit?: number | undefined
}

export class CallLog {
  private entries: Array<CallEntry> = []
  private start = 0
  private nextSeq = 1
  readonly limit: number

  constructor(limit: number) {
    this.limit = limit
  }

  get lastSeq(): number {
    return this.nextSeq - 1
  }

  add(entry: Omit<CallEntry, "seq">): CallEntry {
    const full = { ...entry, seq: this.nextSeq++ } as CallEntry
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

  query(q: CallQuery): ReadonlyArray<CallEntry> {
    const out: Array<CallEntry> = []
    const limit = q.limit ?? Number.MAX_SAFE_INTEGER
    for (let i = this.start; i < this.entries.length && out.length < limit; i++) {
      const e = this.entries[i]!
      if (q.since !== undefined && e.seq <= q.since) continue
      if (q.sinceMs !== undefined && e.at < q.sinceMs) continue
      if (q.appId !== undefined && e.appId !== q.appId) continue
      if (q.businessId !== undefined && e.businessId !== q.businessId) continue
      if (q.operation !== undefined && e.operation !== q.operation) continue
      if (q.outcome !== undefined && e.outcome !== q.outcome) continue
      out.push(e)
    }
    return out
  }

  clear(): void {
    this.entries = []
    this.start = 0
  }
}
