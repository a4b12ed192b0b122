/**
 * Non-fatal notes in a success response.
 *
 * docs/api-catalogue.md, Response envelope: `warning` is a string, an object or an array;
 * Versioning 3: a deprecated field is announced in a success response's `warning` array, naming the
 * replacement field. Warnings are never dropped: callers log them, count them and append them
 * to the event log.
 */

/** A known deprecation: the field to stop sending and the one to use instead. */
export interface Deprecation {
  readonly field: string
  readonly replacement: string
}

export interface Warning {
  /** A readable rendering of the entry. */
  readonly text: string
  /** The entry exactly as decoded (string, object, or any JSON value). */
  readonly raw: unknown
  /** Set when the entry announces a deprecated field. */
  readonly deprecation?: Deprecation | undefined
}

/** Deprecations the API reference names. docs/api-catalogue.md, §3 Orders: orderPrivateId is deprecated, use appOrderId. */
export const knownDeprecations: ReadonlyArray<Deprecation> = [{ field: "orderPrivateId", replacement: "appOrderId" }]

const render = (value: unknown): string =>
  typeof value === "string"
    ? value
    : JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v)) ?? String(value)

const PATTERNS: ReadonlyArray<RegExp> = [
  /`?([A-Za-z_]\w*(?:\.\w+)*)`?\s+(?:is|was|has been)\s+deprecated\b.*?\buse\s+`?([A-Za-z_]\w*(?:\.\w+)*)/i,
  /\buse\s+`?([A-Za-z_]\w*(?:\.\w+)*)`?\s+instead of\s+`?([A-Za-z_]\w*(?:\.\w+)*)/i
]

/** Finds a deprecation in a warning's text: a known one first, then common phrasings. */
export const detectDeprecation = (text: string): Deprecation | undefined => {
  for (const known of knownDeprecations) {
    if (text.includes(known.field)) return known
  }
  const deprecated = PATTERNS[0]!.exec(text)
  if (deprecated !== null) return { field: deprecated[1]!, replacement: deprecated[2]! }
  const instead = PATTERNS[1]!.exec(text)
  if (instead !== null) return { field: instead[2]!, replacement: instead[1]! }
  return undefined
}

const entry = (raw: unknown, text: string): Warning => {
  const deprecation = detectDeprecation(text)
  return deprecation === undefined ? { text, raw } : { text, raw, deprecation }
}

/**
 * Normalises `warning` to a list: a string is one entry, an array one entry per element, an
 * object one entry per key (rendered `key: value`). Absent or null is no warning.
 */
export const normalize = (warning: unknown): ReadonlyArray<Warning> => {
  if (warning === undefined || warning === null) return []
  if (typeof warning === "string") return [entry(warning, warning)]
  if (Array.isArray(warning)) return warning.map((w) => entry(w, render(w)))
  if (typeof warning === "object") {
    return Object.entries(warning).map(([key, value]) => entry({ [key]: value }, `${key}: ${render(value)}`))
  }
  return [entry(warning, render(warning))]
}
