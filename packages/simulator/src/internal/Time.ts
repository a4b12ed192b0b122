/**
 * Record timestamps. Decision (docs/api-catalogue.md, not shown): every record's `updatedAt` is an ISO-8601
 * UTC string with milliseconds ("2024-05-01T10:00:00.000Z"); filters `updatedAtFrom` and
 * `updatedAtTo` accept that form or unix seconds (a number), both bounds inclusive.
 */
export const iso = (ms: number): string => new Date(ms).toISOString()

/** Parses an updatedAt bound: an ISO string or unix seconds. */
export const parseInstant = (value: unknown): number | undefined => {
  if (typeof value === "number" && Number.isFinite(value)) return Math.round(value * 1000)
  if (typeof value === "string" && value.length >= 10) {
    const ms = Date.parse(value)
    return Number.isNaN(ms) ? undefined : ms
  }
  return undefined
}
