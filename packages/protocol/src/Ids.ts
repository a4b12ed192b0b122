/**
 * Identifiers: appId, businessId, record ids.
 *
 * The API reference types businessId as bigint in webhooks and ids as integers; real ids may exceed
 * 2^53. In domain types every id is its canonical decimal string: exact, comparable, usable
 * as a SQLite key. On the wire (requests we send) an id is written back as an integer literal.
 */
import { Schema, SchemaTransformation } from "effect"

const DIGITS = /^-?(?:0|[1-9][0-9]*)$/

/** A canonical decimal integer string, e.g. "9007199254740993". */
export const IdString = Schema.String.check(Schema.isPattern(DIGITS)).pipe(Schema.brand("IdString"))
export type IdString = typeof IdString.Type

/**
 * Decodes an id as the service sends it (a JSON integer, possibly a bigint from the lossless
 * parser, or a string of digits) to its canonical string, never through a rounded number.
 */
export const Id = Schema.Union([
  Schema.Number.check(Schema.isInt()),
  Schema.BigInt,
  Schema.String.check(Schema.isPattern(DIGITS))
]).pipe(
  Schema.decodeTo(
    IdString,
    SchemaTransformation.transform<string, number | bigint | string>({
      decode: (input) => BigInt(input).toString(),
      encode: (id) => toWire(id)
    })
  )
)
export type Id = typeof Id.Type

/** The value to put in a request body for an id: a number when safe, else a bigint. */
export const toWire = (id: string): number | bigint => {
  const big = BigInt(id)
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big
}

/** Canonical id string from anything integer-like; undefined when it is not one. */
export const normalize = (input: unknown): IdString | undefined => {
  // Ids are positive: 0 and negative numbers name nothing the service hands out.
  if (typeof input === "bigint") return input > 0n ? input.toString() as IdString : undefined
  if (typeof input === "number" && Number.isSafeInteger(input)) return input > 0 ? String(input) as IdString : undefined
  if (typeof input === "string" && DIGITS.test(input)) {
    const n = BigInt(input)
    return n > 0n ? n.toString() as IdString : undefined
  }
  return undefined
}

/** An application's id. */
export const AppId = IdString
export type AppId = IdString

/** A business's id (may exceed 2^53). */
export const BusinessId = IdString
export type BusinessId = IdString

/** The pair every piece of state is keyed by. */
export const Tenant = Schema.Struct({ appId: AppId, businessId: BusinessId })
export type Tenant = typeof Tenant.Type

/** `appId:businessId`: the key of per-tenant state, topics, logs. */
export type TenantKey = `${string}:${string}`

/**
 * A tenant as the plain text ids stores, rows and log records hold (`Tenant` is the decoded,
 * branded form). Every package names a tenant with this type rather than its own.
 */
export interface TenantRef {
  readonly appId: string
  readonly businessId: string
}

/**
 * The one text key of a tenant, `"<appId>:<businessId>"`: maps, partitions, Kafka message keys.
 * An application-level record (no business) keys as `"<appId>:"`.
 */
export const tenantKey = (tenant: { readonly appId: string; readonly businessId: string | null }): TenantKey =>
  `${tenant.appId}:${tenant.businessId ?? ""}`

export const makeTenant = (appId: string | number | bigint, businessId: string | number | bigint): Tenant => {
  const a = normalize(appId)
  const b = normalize(businessId)
  if (a === undefined || b === undefined) {
    throw new TypeError(`tenant ids must be integers, got appId=${String(appId)} businessId=${String(businessId)}`)
  }
  return { appId: a, businessId: b }
}
