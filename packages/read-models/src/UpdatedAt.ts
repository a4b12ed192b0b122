/**
 * `updatedAt` values as the service sends them, normalised to epoch milliseconds for the
 * conflict rule. The API reference does not show the format (docs/api-catalogue.md, the catalogue's record shapes), so this
 * accepts what is common and returns `null` for anything else (the rule then falls back to log
 * order):
 * - numbers (and digit strings): epoch seconds when below 1e11, else epoch milliseconds;
 * - ISO 8601 dates and date-times, `T` or a space between date and time, optional fraction and
 *   zone (`Z`, `+07:00`, `+0700`); a date-time without a zone is read as UTC.
 */
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i
const NUMERIC = /^-?\d+(?:\.\d+)?$/

const fromEpoch = (n: number): number | null => {
  if (!Number.isFinite(n)) return null
  return Math.abs(n) < 1e11 ? Math.round(n * 1000) : Math.round(n)
}

/** Epoch milliseconds of an `updatedAt` value, or null when it is absent or not understood. */
export const toMillis = (value: unknown): number | null => {
  switch (typeof value) {
    case "number":
      return fromEpoch(value)
    case "bigint":
      return fromEpoch(Number(value))
    case "string":
      break
    default:
      return null
  }
  const text = value.trim()
  if (NUMERIC.test(text)) return fromEpoch(Number(text))
  const m = ISO.exec(text)
  if (m === null) return null
  const month = Number(m[2])
  const day = Number(m[3])
  const hour = Number(m[4] ?? "0")
  const minute = Number(m[5] ?? "0")
  const second = Number(m[6] ?? "0")
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null
  const millis = m[7] === undefined ? 0 : Math.floor(Number(m[7]) * 1000)
  let ms = Date.UTC(Number(m[1]), month - 1, day, hour, minute, second, millis)
  const zone = m[8]
  if (zone !== undefined && zone.toUpperCase() !== "Z") {
    const sign = zone[0] === "-" ? -1 : 1
    const digits = zone.slice(1).replace(":", "")
    ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60_000
  }
  return Number.isFinite(ms) ? ms : null
}

/** The value as received, as text: a string as-is, any other JSON value as its JSON text. */
export const asText = (value: unknown, stringify: (value: unknown) => string): string | null =>
  value === undefined || value === null ? null : typeof value === "string" ? value : stringify(value)
