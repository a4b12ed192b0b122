/**
 * The filters of a list request, checked against the catalogue entry of its operation: only
 * documented filters, each of its documented kind, required ones present; and the date
 * window (docs/api-catalogue.md §3.1, §5.1): a range of at most `maxDays`, the last `maxDays`
 * when none is sent, lifted by the filters that name records (ids, customer).
 */
import * as Operation from "@ocs/protocol/Operation"
import type * as Json from "@ocs/protocol/Json"
import type { Messages, Obj } from "./ApiCall.ts"
import { isObj } from "./ApiCall.ts"
import type { ListOperation } from "./Operations.ts"

const DAY_MS = 24 * 3600 * 1000

/** Filters outside the catalogue that the simulator still reads (deprecated, with a warning). */
const LEGACY: Readonly<Record<string, ReadonlyArray<string>>> = { "order/list": ["orderPrivateId"] }

/** Filters that lift an operation's window: they name the records wanted. */
const LIFTS: Readonly<Record<string, ReadonlyArray<string>>> = {
  "order/list": ["ids", "shippingAddress", "updatedAtFrom", "updatedAtTo", "orderPrivateId"],
  "bill/list": ["ids", "customerId", "customerMobile"]
}

const isInt = (v: unknown): boolean => (typeof v === "number" && Number.isSafeInteger(v)) || typeof v === "bigint"

const kindOk = (kind: string, v: Json.JsonValue): string | undefined => {
  switch (kind) {
    case "number":
      return isInt(v) || (typeof v === "number" && Number.isFinite(v)) ? undefined : "must be a number"
    case "number[]":
      return Array.isArray(v) && v.every((x) => isInt(x)) ? (v.length > 100 ? "at most 100 values" : undefined) : "must be an array of integers"
    case "string":
      return typeof v === "string" ? undefined : "must be a string"
    case "string[]":
      return Array.isArray(v) && v.every((x) => typeof x === "string") ? undefined : "must be an array of strings"
    case "boolean":
      return typeof v === "boolean" || v === 0 || v === 1 ? undefined : "must be a boolean"
    case "object":
      return isObj(v) || Array.isArray(v) ? undefined : "must be an object"
    case "unixSeconds":
      return Operation.parseBound(v, "unix") === undefined ? "must be unix seconds" : undefined
    case "date":
      return Operation.parseBound(v, "date") === undefined ? "must be a date written yyyy-mm-dd" : undefined
    default:
      return undefined
  }
}

/** A time range in ms, both ends inclusive. */
export interface Range {
  readonly from: number
  readonly to: number
}

export interface CheckedFilters {
  readonly filters: Obj
  /** The created-time (or date) range every record must fall in, when the operation has a window. */
  readonly window: Range | undefined
  /** The updated-time range, when `updatedAtFrom`/`updatedAtTo` were sent. */
  readonly updated: Range | undefined
}

const dayStart = (ms: number): number =>
  Math.floor((ms + Operation.SERVICE_UTC_OFFSET_MS) / DAY_MS) * DAY_MS - Operation.SERVICE_UTC_OFFSET_MS

/** Reads a pair of bounds; a range longer than `maxDays` is named in `messages`. */
const range = (
  f: Obj,
  from: string,
  to: string,
  format: "unix" | "date",
  maxDays: number | undefined,
  now: number,
  messages: Messages
): Range | undefined => {
  const hasFrom = f[from] !== undefined
  const hasTo = f[to] !== undefined
  if (!hasFrom && !hasTo) return undefined
  const a = hasFrom ? Operation.parseBound(f[from], format, "start") : undefined
  const b = hasTo ? Operation.parseBound(f[to], format, "end") : undefined
  if ((hasFrom && a === undefined) || (hasTo && b === undefined)) return undefined
  const end = b ?? (maxDays === undefined ? Number.MAX_SAFE_INTEGER : Math.min(now, a! + maxDays * DAY_MS - 1))
  const start = a ?? (maxDays === undefined ? 0 : format === "date" ? dayStart(end) - (maxDays - 1) * DAY_MS : end - maxDays * DAY_MS)
  if (start > end) messages[`filters.${from}`] = `${from} must not be after ${to}`
  else if (maxDays !== undefined && end - start + 1 > maxDays * DAY_MS + (format === "unix" ? 1000 : 0)) {
    messages[`filters.${from}`] = `the range ${from} to ${to} spans more than ${maxDays} days; query at most ${maxDays} days at a time`
  }
  return { from: start, to: end }
}

/** Filters the real service is recorded to accept outside the catalogue, and what they mean. */
const ALIASES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  // docs/api-catalogue.md, "Simulator leniency" 5: a recorded customer/list answer to `filters.id`.
  "customer/list": { id: "ids" }
}

const NUMERIC = /^-?\d{1,30}$/
const fromNumericString = (v: string): number | bigint => {
  const n = Number(v)
  return Number.isSafeInteger(n) ? n : BigInt(v)
}

/**
 * The lenient reading of the filters (docs/api-catalogue.md, "Simulator leniency" 1-5): a null
 * filter is absent, an unknown one is ignored, `ids` written as strings are read as numbers
 * (the reference types the field only as "array"), and an alias names its documented filter.
 */
const lenient = (op: ListOperation, key: string, f: Obj): Obj => {
  const aliases = ALIASES[key] ?? {}
  const legacy = LEGACY[key] ?? []
  const out: Record<string, Json.JsonValue> = {}
  for (const [name, value] of Object.entries(f)) {
    if (value === null) continue
    const alias = aliases[name]
    if (alias !== undefined) {
      if (f[alias] === undefined || f[alias] === null) out[alias] = Array.isArray(value) ? value : [value]
      continue
    }
    const kind = op.entry.filters[name]
    if (kind === undefined && !legacy.includes(name)) continue
    if (kind === "number[]" && name === "ids" && Array.isArray(value)) {
      out[name] = value.map((x) => typeof x === "string" && NUMERIC.test(x) ? fromNumericString(x) : x)
    } else out[name] = value
  }
  return out
}

export const checkFilters = (
  op: ListOperation,
  raw: Json.JsonValue | undefined,
  now: number,
  messages: Messages,
  strict = true
): CheckedFilters => {
  if (raw !== undefined && raw !== null && !isObj(raw)) messages["filters"] = "must be an object"
  const key = `${op.resource}/${op.operation}`
  const f: Obj = !isObj(raw) ? {} : strict ? raw : lenient(op, key, raw)
  const legacy = LEGACY[key] ?? []
  for (const [name, value] of Object.entries(f)) {
    const kind = op.entry.filters[name]
    if (kind === undefined) {
      if (!legacy.includes(name)) messages[`filters.${name}`] = `unknown filter; accepted: ${op.filters.join(", ")}`
      continue
    }
    const problem = kindOk(kind, value)
    if (problem !== undefined) messages[`filters.${name}`] = problem
  }
  for (const name of op.entry.requiredFilters ?? []) {
    if (f[name] === undefined) messages[`filters.${name}`] = "is required"
  }
  const w = op.entry.window
  const inc = op.entry.incremental
  // order/list: the updated-time pair is confined to 31 days too (docs/api-catalogue.md §3.1).
  const updated = inc === undefined ? undefined : range(f, inc.from, inc.to, "unix", w?.format === "unix" ? w.maxDays : undefined, now, messages)
  let window: Range | undefined
  if (w !== undefined) {
    window = range(f, w.from, w.to, w.format, w.maxDays, now, messages)
    const lifted = (LIFTS[key] ?? []).some((name) => f[name] !== undefined)
    if (window === undefined && !lifted) {
      // No range and nothing that names records: the last maxDays days.
      window = w.format === "date"
        ? { from: dayStart(now) - (w.maxDays - 1) * DAY_MS, to: dayStart(now) + DAY_MS - 1 }
        : { from: now - w.maxDays * DAY_MS, to: now }
    }
  }
  return { filters: f, window, updated }
}
