/**
 * Time ranges a pull is confined to.
 *
 * Some operations answer at most `maxDays` at a time and only the last `maxDays` when no
 * range is sent (order/list by creation time, bill/list by date: 31 days; see
 * docs/api-catalogue.md). A full read therefore walks back window by window, newest first,
 * to a horizon; an incremental read covers `[last bound - overlap, now]` in pieces of at most
 * `maxDays`. Consecutive windows tile exactly: date windows are whole calendar days of the
 * service's zone, unix windows whole seconds (both bounds of a query are inclusive,
 * docs/api-catalogue.md: order/list `createdAtFrom`/`createdAtTo`), so no day or second is read
 * by two windows and none is skipped.
 */
import { Operation } from "@ocs/protocol"

const DAY_MS = 24 * 3600 * 1000
const SECOND_MS = 1000

export interface Range {
  /** First instant covered (ms, inclusive). */
  readonly from: number
  /** Last instant covered (ms, inclusive). */
  readonly to: number
}

/** The first millisecond of the service's calendar day holding `ms`. */
const dayStart = (ms: number): number =>
  Math.floor((ms + Operation.SERVICE_UTC_OFFSET_MS) / DAY_MS) * DAY_MS - Operation.SERVICE_UTC_OFFSET_MS

/** The first millisecond of the second holding `ms`. */
const secondStart = (ms: number): number => Math.floor(ms / SECOND_MS) * SECOND_MS

/**
 * The range of at most `maxDays` that ends at `to`, not reaching before `floor`, cut on the
 * format's unit: a unix bound is a whole second, so a range ends at the last millisecond of
 * `to`'s second and the next (older) one ends at the last millisecond of the second before.
 */
const rangeEndingAt = (to: number, maxDays: number, format: "unix" | "date" | "iso", floor: number): Range => {
  if (format === "date") return { from: Math.max(dayStart(to) - (maxDays - 1) * DAY_MS, dayStart(floor)), to }
  if (format === "iso") return { from: Math.max(to - maxDays * DAY_MS + SECOND_MS, floor), to }
  const end = secondStart(to) + SECOND_MS - 1
  return { from: Math.max(secondStart(to) - maxDays * DAY_MS + SECOND_MS, secondStart(floor)), to: end }
}

/**
 * The window of a full read that ends at `end` (the newest still to read), or undefined once
 * `end` is older than the horizon.
 */
export const fullWindow = (window: Operation.Window, end: number, horizon: number): Range | undefined =>
  end < horizon ? undefined : rangeEndingAt(end, window.maxDays, window.format, horizon)

/** Where the next (older) window of a full read ends, after `range` was read. */
export const nextWindowEnd = (range: Range): number => range.from - 1

/** Splits `[from, to]` into ranges of at most `maxDays`, oldest first. */
export const pieces = (from: number, to: number, maxDays: number | undefined, format: "unix" | "date" | "iso"): ReadonlyArray<Range> => {
  if (maxDays === undefined) return [{ from, to }]
  const out: Array<Range> = []
  let end = to
  while (end >= from) {
    const r = rangeEndingAt(end, maxDays, format, from)
    out.push(r)
    end = r.from - 1
  }
  return out.toReversed()
}

/** The filters that select `range` with the operation's bound names and format. */
export const rangeFilters = (
  bounds: { readonly from: string; readonly to: string; readonly format: "unix" | "date" | "iso" },
  range: Range
): Record<string, string | number> => ({
  [bounds.from]: Operation.formatBound(range.from, bounds.format),
  [bounds.to]: Operation.formatBound(range.to, bounds.format)
})
