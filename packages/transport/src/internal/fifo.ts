/**
 * The queue a budget key keeps its waiters in (one per priority class): plain data structure,
 * no clock, no Effect.
 */
/** A FIFO with O(1) push and shift; compacts itself when half empty. */
export class Fifo<A> {
  private items: Array<A> = []
  private head = 0
  get size(): number {
    return this.items.length - this.head
  }
  push(a: A): void {
    this.items.push(a)
  }
  peek(): A | undefined {
    return this.items[this.head]
  }
  shift(): A | undefined {
    if (this.head >= this.items.length) return undefined
    const a = this.items[this.head]
    this.items[this.head] = undefined as never
    this.head++
    if (this.head === this.items.length) {
      // Drained: drop the backing array so idle keys stay small.
      this.items = []
      this.head = 0
    } else if (this.head > 32 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return a
  }
}
