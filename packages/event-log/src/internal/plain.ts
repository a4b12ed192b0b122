/**
 * Direct checks for the hot paths that would otherwise run a schema over every record (which
 * copies it). Each caller keeps its schema for anything these do not accept, and a property
 * test holds each check to its schema.
 */

export const DIGITS = /^[0-9]+$/
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** An object literal (or null-prototype object): no class instance, no array. */
export const isPlainObject = (u: unknown): u is Record<string, unknown> => {
  if (typeof u !== "object" || u === null) return false
  const proto = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

/** An optional key: absent, or present with a value `ok` accepts (never present as undefined). */
export const optional = (r: Record<string, unknown>, key: string, ok: (v: unknown) => boolean): boolean =>
  Object.hasOwn(r, key) ? ok(r[key]) : r[key] === undefined

export const isNullOrString = (v: unknown): boolean => v === null || typeof v === "string"

export const isDigits = (v: unknown): v is string => typeof v === "string" && DIGITS.test(v)

export const isSource = (v: unknown): boolean => v === "webhook" || v === "sync" || v === "system"
