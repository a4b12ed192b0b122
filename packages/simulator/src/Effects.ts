/**
 * What the service applied through its write operations, per business: one entry per effect
 * (a product, an order, a customer added or updated, a bill, a stock movement), with the key
 * a caller can find it by: `appProductId`, `appOrderId`, the customer's mobile, or the
 * description of a bill or movement (where a caller leaves a marker), and whether its answer
 * reached the caller. Tests count them through the control API to prove a write took effect
 * exactly once, whatever was lost on the way back, and to list the writes whose answer was lost.
 */
import type { WriteKind } from "@ocs/protocol/Catalogue"

export interface Effect {
  readonly kind: WriteKind
  /** The natural key, or the description for writes that have none. */
  readonly key: string
  readonly id: bigint
  readonly atMs: number
  /**
   * What the caller was told: "answered" (the success was sent), "lost" (a `lostAnswer`
   * fault cut the connection: the caller cannot know the write took effect), or "pending"
   * while the answer is being delayed.
   */
  answer: "pending" | "answered" | "lost"
}

export class Effects {
  private readonly entries: Array<Effect> = []

  get size(): number {
    return this.entries.length
  }

  add(effect: Omit<Effect, "answer">): void {
    this.entries.push({ ...effect, answer: "pending" })
  }

  /** The effects recorded from position `from` on (those of one call, taken before it answers). */
  since(from: number): ReadonlyArray<Effect> {
    return this.entries.slice(from)
  }

  list(kind?: WriteKind): ReadonlyArray<Effect> {
    return kind === undefined ? this.entries : this.entries.filter((e) => e.kind === kind)
  }

  /** How many effects of `kind` have exactly `key`. */
  countKeys(kind: WriteKind, keys: ReadonlyArray<string>): Record<string, number> {
    const counts: Record<string, number> = Object.fromEntries(keys.map((k) => [k, 0]))
    for (const e of this.entries) if (e.kind === kind && e.key in counts) counts[e.key]!++
    return counts
  }

  /** How many effects of `kind` hold `marker` somewhere in their key (a description). */
  countMarkers(kind: WriteKind, markers: ReadonlyArray<string>): Record<string, number> {
    const counts: Record<string, number> = Object.fromEntries(markers.map((m) => [m, 0]))
    for (const e of this.entries) {
      if (e.kind !== kind) continue
      for (const m of markers) if (e.key.includes(m)) counts[m]!++
    }
    return counts
  }

  /** Effects of `kind` whose answer was lost (the caller cannot know they took effect). */
  lost(kind: WriteKind): ReadonlyArray<Effect> {
    return this.entries.filter((e) => e.kind === kind && e.answer === "lost")
  }

  /** Keys of `kind` applied more than once. */
  duplicates(kind: WriteKind): Record<string, number> {
    const counts = new Map<string, number>()
    for (const e of this.entries) if (e.kind === kind) counts.set(e.key, (counts.get(e.key) ?? 0) + 1)
    const out: Record<string, number> = {}
    for (const [k, n] of counts) if (n > 1) out[k] = n
    return out
  }
}
