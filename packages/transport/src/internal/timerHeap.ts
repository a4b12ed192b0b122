/**
 * The keys that must wait for time (a window slot or a lock end), ordered by when: a binary
 * min-heap over any entry with an `at`.
 */
export interface TimerEntry<K> {
  readonly at: number
  readonly key: K
}

/** Min-heap of timer entries by `at`. */
export class TimerHeap<K> {
  private heap: Array<TimerEntry<K>> = []
  get size(): number {
    return this.heap.length
  }
  peek(): TimerEntry<K> | undefined {
    return this.heap[0]
  }
  push(entry: TimerEntry<K>): void {
    const h = this.heap
    h.push(entry)
    let i = h.length - 1
    while (i > 0) {
      const p = (i - 1) >> 1
      if (h[p]!.at <= entry.at) break
      h[i] = h[p]!
      i = p
    }
    h[i] = entry
  }
  pop(): TimerEntry<K> | undefined {
    const h = this.heap
    const top = h[0]
    const last = h.pop()
    if (top === undefined || last === undefined || h.length === 0) return top
    let i = 0
    for (;;) {
      const l = 2 * i + 1
      if (l >= h.length) break
      const r = l + 1
      const c = r < h.length && h[r]!.at < h[l]!.at ? r : l
      if (h[c]!.at >= last.at) break
      h[i] = h[c]!
      i = c
    }
    h[i] = last
    return top
  }
}
