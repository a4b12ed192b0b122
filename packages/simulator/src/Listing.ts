/**
 * Keyset pagination over a table, stable under concurrent mutation: records are ordered by
 * the sort keys and then by id, and a page resumes strictly after the (values, id) of the
 * last position it examined. Deleted records leave holes; records hidden by filters are
 * skipped within a scan budget, so a page may be shorter than `size` and still have a next
 * (docs/api-catalogue.md, Paginator 5).
 */

export type SortValue = string | number | bigint

export interface SortKey {
  readonly field: string
  readonly desc: boolean
}

/** Where the previous page stopped. */
export interface Seek {
  readonly values: ReadonlyArray<SortValue>
  readonly id: bigint
}

export interface Source<R> {
  readonly positions: () => number
  readonly at: (pos: number) => R | undefined
  readonly idAt: (pos: number) => bigint
  readonly posOf: (id: bigint) => number | undefined
  readonly base: bigint
  readonly version: () => number
  readonly sortValue: (record: R, field: string) => SortValue
}

export interface PageRequest<R> {
  readonly sort: ReadonlyArray<SortKey>
  readonly after: Seek | undefined
  readonly size: number
  readonly predicate: ((record: R) => boolean) | undefined
  /** Positions examined at most for one page. */
  readonly scanBudget: number
}

export interface Page<R> {
  readonly records: ReadonlyArray<R>
  /** Where to resume; undefined when the data is exhausted. */
  readonly next: Seek | undefined
}

const compareValues = (a: SortValue, b: SortValue): number => a < b ? -1 : a > b ? 1 : 0

/** Pages through `source`. Sorting only by id walks positions directly (no index). */
export const page = <R>(source: Source<R>, request: PageRequest<R>, indexes: IndexCache<R>): Page<R> => {
  const { size, predicate, scanBudget } = request
  const sort = request.sort.filter((key, i) => !(key.field === "id" && i === request.sort.length - 1))
  const idDesc = request.sort.length === 1 && request.sort[0]!.field === "id" && request.sort[0]!.desc
  const records: Array<R> = []
  if (sort.length === 0) {
    const total = source.positions()
    const step = idDesc ? -1 : 1
    let pos: number
    if (request.after === undefined) pos = idDesc ? total - 1 : 0
    else {
      const offset = request.after.id - source.base
      pos = offset < 0n ? (idDesc ? -1 : 0) : offset >= BigInt(total) ? (idDesc ? total - 1 : total) : Number(offset) + step
    }
    let scanned = 0
    let last = -1
    while (pos >= 0 && pos < total && scanned < scanBudget && records.length < size) {
      const record = source.at(pos)
      if (record !== undefined && (predicate === undefined || predicate(record))) records.push(record)
      last = pos
      pos += step
      scanned++
    }
    const exhausted = pos < 0 || pos >= total
    if (exhausted) return { records, next: undefined }
    return { records, next: { values: [], id: source.idAt(last === -1 ? pos - step : last) } }
  }
  const index = indexes.get(source, sort)
  let i = request.after === undefined ? 0 : seekIndex(index, request.after, Number(request.after.id - source.base))
  let scanned = 0
  let last: Seek | undefined
  while (i < index.positions.length && scanned < scanBudget && records.length < size) {
    const pos = index.positions[i]!
    const record = source.at(pos)
    if (record !== undefined && (predicate === undefined || predicate(record))) records.push(record)
    last = { values: index.keys.map((column) => column[i]!), id: source.idAt(pos) }
    i++
    scanned++
  }
  if (i >= index.positions.length || last === undefined) return { records, next: undefined }
  return { records, next: last }
}

/** A sorted view of a table's live records, rebuilt when the table changes. */
export interface SortedIndex {
  readonly sort: ReadonlyArray<SortKey>
  /** Positions in sorted order; ids grow with positions, so position breaks ties like id. */
  readonly positions: Int32Array
  /** keys[k][i]: the value of sort key k of the record at positions[i]. */
  readonly keys: ReadonlyArray<ArrayLike<SortValue>>
}

const seekIndex = (index: SortedIndex, after: Seek, afterPos: number): number => {
  let lo = 0
  let hi = index.positions.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (compareEntry(index, mid, after, afterPos) <= 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

const compareEntry = (index: SortedIndex, i: number, seek: Seek, seekPos: number): number => {
  for (let k = 0; k < index.sort.length; k++) {
    const value = seek.values[k]
    if (value === undefined) return 1
    const c = compareValues(index.keys[k]![i]!, value)
    if (c !== 0) return index.sort[k]!.desc ? -c : c
  }
  return index.positions[i]! - seekPos
}

export class IndexCache<R> {
  private readonly entries = new Map<string, { readonly version: number; readonly index: SortedIndex }>()

  get(source: Source<R>, sort: ReadonlyArray<SortKey>): SortedIndex {
    const key = sort.map((k) => `${k.field}:${k.desc ? "d" : "a"}`).join(",")
    const version = source.version()
    const cached = this.entries.get(key)
    if (cached !== undefined && cached.version === version) return cached.index
    const index = build(source, sort)
    if (this.entries.size > 8) this.entries.clear()
    this.entries.set(key, { version, index })
    return index
  }
}

const build = <R>(source: Source<R>, sort: ReadonlyArray<SortKey>): SortedIndex => {
  const live: Array<number> = []
  const columns: Array<Array<SortValue>> = sort.map(() => [])
  const total = source.positions()
  for (let pos = 0; pos < total; pos++) {
    const record = source.at(pos)
    if (record === undefined) continue
    for (let k = 0; k < sort.length; k++) columns[k]!.push(source.sortValue(record, sort[k]!.field))
    live.push(pos)
  }
  const order = new Int32Array(live.length)
  for (let i = 0; i < order.length; i++) order[i] = i
  order.sort((a, b) => {
    for (let k = 0; k < sort.length; k++) {
      const c = compareValues(columns[k]![a]!, columns[k]![b]!)
      if (c !== 0) return sort[k]!.desc ? -c : c
    }
    return a - b
  })
  const positions = new Int32Array(order.length)
  for (let i = 0; i < order.length; i++) positions[i] = live[order[i]!]!
  const keys = columns.map((column) => {
    if (!column.every((v) => typeof v === "number")) return Array.from(order, (i) => column[i]!)
    const out = new Float64Array(order.length)
    for (let i = 0; i < order.length; i++) out[i] = column[order[i]!]! as number
    return out
  })
  return { sort, positions, keys }
}
