/**
 * A record shape written once, as a list of fields. Its check and its TypeScript type are
 * derived from that list, so the two cannot disagree.
 *
 * The check is a direct one, not a schema: it runs on every appended record and every row
 * read, and a schema copies what it decodes (measured: about 1.5 KB and 1 µs per record).
 * It returns `undefined` for a valid value (no allocation on the hot path) and otherwise a
 * message naming the first field it rejects.
 *
 * Plain functions, no imports: the writer thread may load it as well.
 */

/** What a field holds. A closed set, so the check is one switch rather than a call per field. */
type Kind = "string" | "nonEmptyString" | "digits" | "uuid" | "safeInteger" | "source" | "jsonObject"

export interface Field<A> {
  readonly kind: Kind
  /** What a valid value is, for the message that names a rejected field ("a string of digits"). */
  readonly expected: string
  readonly nullable: boolean
  /** An optional key may be absent; present, it must be valid (present as undefined is not). */
  readonly optional: boolean
  /** The value's type, for `Shape` (never set). */
  readonly _A?: A
}

export type Fields = { readonly [key: string]: Field<any> }

type ValueOf<F> = F extends Field<infer A> ? A : never
type OptionalKeys<F extends Fields> = { [K in keyof F]: F[K] extends { readonly optional: true } ? K : never }[keyof F]
type Simplify<T> = { [K in keyof T]: T[K] } & {}

/** The object type a field list describes (optional fields as optional keys). */
export type Shape<F extends Fields> = Simplify<
  & { readonly [K in Exclude<keyof F, OptionalKeys<F>>]: ValueOf<F[K]> }
  & { readonly [K in OptionalKeys<F>]?: ValueOf<F[K]> }
>

const field = <A>(kind: Kind, expected: string): Field<A> & { readonly optional: false } => ({
  kind,
  expected,
  nullable: false,
  optional: false
})

export const optional = <A>(f: Field<A>): Field<A> & { readonly optional: true } => ({ ...f, optional: true })

export const nullable = <A>(f: Field<A>): Field<A | null> & { readonly optional: false } => ({
  ...f,
  expected: `${f.expected} or null`,
  nullable: true,
  optional: false
})

/** An object literal (or null-prototype object): no class instance, no array, no Map. */
export const isPlainObject = (u: unknown): u is Record<string, unknown> => {
  if (typeof u !== "object" || u === null) return false
  const proto = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

const DIGITS = /^[0-9]+$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export type Source = "webhook" | "sync" | "system"

export const string = field<string>("string", "a string")
export const nonEmptyString = field<string>("nonEmptyString", "a non-empty string")
/** appId and businessId: strings because they may exceed 2^53. */
export const digits = field<string>("digits", "a string of digits")
export const uuid = field<string>("uuid", "a lowercase UUID")
export const safeInteger = field<number>("safeInteger", "a safe integer")
export const source = field<Source>("source", `"webhook", "sync" or "system"`)
/** A JSON object (values may hold bigints; they are written losslessly). */
export const jsonObject = field<Record<string, unknown>>("jsonObject", "a plain object")

/** The test of each kind, as an expression on `v` (see `check`). */
const tests: Record<Kind, string> = {
  string: `typeof v === "string"`,
  nonEmptyString: `typeof v === "string" && v.length > 0`,
  digits: `typeof v === "string" && DIGITS.test(v)`,
  uuid: `typeof v === "string" && UUID.test(v)`,
  safeInteger: `Number.isSafeInteger(v)`,
  source: `v === "webhook" || v === "sync" || v === "system"`,
  jsonObject: `isPlainObject(v)`
}

/** A short description of a rejected value: never the whole of a long string. */
const describe = (u: unknown): string => {
  switch (typeof u) {
    case "string":
      return u.length > 40 ? `${JSON.stringify(u.slice(0, 40))}... (${u.length} characters)` : JSON.stringify(u)
    case "bigint":
      return `${u}n`
    case "object":
      if (u === null) return "null"
      if (Array.isArray(u)) return "an array"
      return isPlainObject(u) ? "an object" : `an instance of ${u.constructor?.name ?? "a class"}`
    case "function":
      return "a function"
    default:
      return String(u)
  }
}

/**
 * The check of a shape: `undefined` when `u` is an object whose fields are all valid (other
 * keys are ignored), else what is wrong, naming the field.
 *
 * Generated from the list once, when the module loads, as the chain of property tests one
 * would write by hand: each field read by its name, no call per field. A loop over the list
 * reads a different key at each step, which V8 cannot specialise; on the read path (every
 * row of a replay) that cost about three times as much per row. Only our own constant keys
 * and the fixed tests above go into the generated text.
 */
export const check = <F extends Fields>(fields: F): (u: unknown) => string | undefined => {
  const keys = Object.keys(fields)
  const lines = keys.map((key, i) => {
    const f = fields[key]!
    const name = JSON.stringify(key)
    const test = f.nullable ? `v === null || ${tests[f.kind]}` : tests[f.kind]
    const absent = f.optional ? `v === undefined && !Object.hasOwn(r, ${name}) ? false : ` : ""
    return `v = r[${name}]; if (${absent}!(${test})) return fail(${i}, v)`
  })
  const fail = (i: number, value: unknown): string => {
    const key = keys[i]!
    const f = fields[key]!
    return `field "${key}" must be ${f.expected}${f.optional ? " (or absent)" : ""}, got ${describe(value)}`
  }
  const notObject = (u: unknown): string => `expected an object, got ${describe(u)}`
  // oxlint-disable-next-line no-new-func -- generated from our own constant field list, see above
  const compiled = new Function("DIGITS", "UUID", "isPlainObject", "fail", "notObject", `return (r) => {
    if (typeof r !== "object" || r === null || Array.isArray(r)) return notObject(r)
    let v
    ${lines.join("\n    ")}
    return undefined
  }`) as (...deps: ReadonlyArray<unknown>) => (u: unknown) => string | undefined
  return compiled(DIGITS, UUID, isPlainObject, fail, notObject)
}
