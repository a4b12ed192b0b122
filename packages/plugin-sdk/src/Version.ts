/**
 * The SDK's own version and the semver check a plugin's `sdkVersion` range goes through.
 *
 * The version is read from this package's package.json (src/ and dist/ both sit beside it), so
 * a release bump by changesets is the only place it changes.
 */
import * as NodeFs from "node:fs"

const readVersion = (): string => {
  try {
    const pkg: unknown = JSON.parse(NodeFs.readFileSync(new URL("../package.json", import.meta.url), "utf8"))
    const v = (pkg as { readonly version?: unknown }).version
    return typeof v === "string" ? v : "0.0.0"
  } catch {
    return "0.0.0"
  }
}

/** The version of @ocs/plugin-sdk that is running. */
export const SDK_VERSION: string = readVersion()

type Triple = readonly [number, number, number]

const parseVersion = (v: string): Triple | undefined => {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(v.trim())
  return m === null ? undefined : [Number(m[1]), Number(m[2]), Number(m[3])]
}

const cmp = (a: Triple, b: Triple): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]

type Comparator = (v: Triple) => boolean

/** `1`, `1.2`, `1.x`, `1.2.*`: the parts given, and how many. */
const partial = (text: string): { readonly parts: Triple; readonly given: number } | undefined => {
  const m = /^v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:[-+].*)?$/.exec(text)
  if (m === null) return undefined
  const raw = [m[1], m[2], m[3]]
  let given = 0
  for (const r of raw) {
    if (r === undefined || /^[xX*]$/.test(r)) break
    given++
  }
  const n = (i: number) => (i < given ? Number(raw[i]) : 0)
  return { parts: [n(0), n(1), n(2)], given }
}

const upper = (p: Triple, given: number): Triple | undefined =>
  given === 0 ? undefined : given === 1 ? [p[0] + 1, 0, 0] : given === 2 ? [p[0], p[1] + 1, 0] : undefined

const comparator = (token: string): Comparator | undefined => {
  if (token === "" || token === "*" || /^[xX]$/.test(token)) return () => true
  const op = /^(\^|~|>=|<=|>|<|=)?(.*)$/.exec(token)!
  const p = partial(op[2]!)
  if (p === undefined) return undefined
  const { parts, given } = p
  switch (op[1]) {
    case ">=": return (v) => cmp(v, parts) >= 0
    case ">": return given < 3 ? (v) => { const u = upper(parts, given); return u === undefined ? false : cmp(v, u) >= 0 } : (v) => cmp(v, parts) > 0
    case "<": return (v) => cmp(v, parts) < 0
    case "<=": return given < 3 ? (v) => { const u = upper(parts, given); return u === undefined ? true : cmp(v, u) < 0 } : (v) => cmp(v, parts) <= 0
    case "~": {
      const u: Triple = given <= 1 ? [parts[0] + 1, 0, 0] : [parts[0], parts[1] + 1, 0]
      return (v) => cmp(v, parts) >= 0 && cmp(v, u) < 0
    }
    case "^": {
      // spec (npm semver): the left-most non-zero part may not change.
      const u: Triple = parts[0] > 0 || given <= 1
        ? [parts[0] + 1, 0, 0]
        : parts[1] > 0 || given <= 2
        ? [0, parts[1] + 1, 0]
        : [0, 0, parts[2] + 1]
      return (v) => cmp(v, parts) >= 0 && cmp(v, u) < 0
    }
    default: {
      if (given === 3) return (v) => cmp(v, parts) === 0
      const u = upper(parts, given)
      return (v) => cmp(v, parts) >= 0 && (u === undefined || cmp(v, u) < 0)
    }
  }
}

/**
 * Whether `version` lies in the npm-style `range` (`^1.2.0`, `~0.3`, `>=1.0.0 <2`, `1.x`,
 * `a || b`, `*`). Returns `undefined` when the range cannot be parsed.
 */
export const satisfies = (version: string, range: string): boolean | undefined => {
  const v = parseVersion(version)
  if (v === undefined) return undefined
  let any = false
  for (const alternative of range.split("||")) {
    // "1.2.0 - 1.4.0" hyphen ranges
    const hyphen = /^\s*(\S+)\s+-\s+(\S+)\s*$/.exec(alternative)
    const tokens = hyphen !== null
      ? [`>=${hyphen[1]}`, `<=${hyphen[2]}`]
      : alternative.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, "$1").split(/\s+/)
    const comparators = tokens.map(comparator)
    if (comparators.some((c) => c === undefined)) return undefined
    if (comparators.every((c) => c!(v))) any = true
  }
  return any
}
