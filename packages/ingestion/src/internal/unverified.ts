/**
 * The memory held by request bodies that have not proved a verify token. Anyone can reach the
 * webhook path, so without a bound a thousand connections that each declare 1 MiB and trickle
 * it hold a gigabyte. Every byte of a body that is still unverified is taken from one budget
 * for the whole receiver; a body that proves its token (in the header before any byte, or
 * found by the top-level scan as the bytes arrive) gives its bytes back and reads on outside
 * the budget. A body that would pass the budget is answered 503 at once and its connection
 * closed. Plain counters: they sit on the path of every chunk.
 */

export interface Settings {
  /** Bytes of unverified bodies held at once, all connections together; 0: no bound. */
  readonly budgetBytes: number
  /**
   * A source that is throttled for wrong tokens must prove its token within this many first
   * bytes (or in the header): a delivery from it is read only that far unverified.
   */
  readonly throttledScanBytes: number
}

export const defaults: Settings = { budgetBytes: 16 * 1024 * 1024, throttledScanBytes: 64 * 1024 }

export interface Budget {
  readonly settings: Settings
  /** Takes `bytes`; false (nothing taken) when that would pass the budget. */
  readonly take: (bytes: number) => boolean
  readonly give: (bytes: number) => void
  /** Bytes held now. */
  readonly used: () => number
}

export const make = (settings: Settings): Budget => {
  let used = 0
  return {
    settings,
    take: (bytes) => {
      if (settings.budgetBytes > 0 && used + bytes > settings.budgetBytes) return false
      used += bytes
      return true
    },
    give: (bytes) => {
      used = Math.max(0, used - bytes)
    },
    used: () => used
  }
}
