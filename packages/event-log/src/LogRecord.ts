/**
 * The record of the event log (DESIGN section 5) and the values around it.
 *
 * A record is a fact as received: `body` is the exact text (byte-identical once encoded as
 * UTF-8), never re-serialised. Ids and businessIds are strings of digits because they may
 * exceed 2^53.
 */
import { Schema } from "effect"
import * as Crypto from "node:crypto"

/** Position in one log: strictly increasing, never reused. SQLite rowid, so a safe integer. */
export type Offset = number

/** `${appId}:${businessId}`; `${appId}:` for application-level facts (webhooksEnabled). */
export type TenantKey = `${string}:${string}`

export const tenantKey = (appId: string, businessId: string | null): TenantKey => `${appId}:${businessId ?? ""}`

/** Either one tenant, or the explicit `"all"` a replay uses. There is no implicit default. */
export type TenantFilter = TenantKey | "all"

export const DigitString = Schema.String.check(Schema.isPattern(/^[0-9]+$/))

export const Source = Schema.Literals(["webhook", "sync", "system"])
export type Source = typeof Source.Type

const Uuid = Schema.String.check(
  Schema.isPattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
)

/** A JSON object (values may hold bigints; they are written losslessly). */
export const Meta = Schema.Record(Schema.String, Schema.Unknown)
export type Meta = typeof Meta.Type

/** What a caller appends. Missing `id` becomes a UUIDv7, missing `receivedAt` the clock's now. */
export const NewRecord = Schema.Struct({
  id: Schema.optionalKey(Uuid),
  appId: DigitString,
  businessId: Schema.NullOr(DigitString),
  source: Source,
  type: Schema.String.check(Schema.isMinLength(1)),
  receivedAt: Schema.optionalKey(Schema.Int),
  body: Schema.String,
  dedupeKey: Schema.optionalKey(Schema.NullOr(Schema.String)),
  meta: Schema.optionalKey(Meta),
  /** Entity the fact is about (product id, order id, ...) for audit lookups; else `meta.entityId`. */
  entityId: Schema.optionalKey(Schema.NullOr(Schema.String))
})
export type NewRecord = typeof NewRecord.Type

/** Where a record sits in Kafka (Kafka mode only). */
export const KafkaPosition = Schema.Struct({ partition: Schema.Int, offset: Schema.String })
export type KafkaPosition = typeof KafkaPosition.Type

export const LogRecord = Schema.Struct({
  /** Offset in the log that accepted the append (in Kafka mode: the outbox offset). */
  offset: Schema.Int,
  id: Schema.String,
  appId: DigitString,
  businessId: Schema.NullOr(DigitString),
  source: Source,
  type: Schema.String,
  receivedAt: Schema.Int,
  body: Schema.String,
  dedupeKey: Schema.NullOr(Schema.String),
  meta: Meta,
  entityId: Schema.NullOr(Schema.String),
  kafka: Schema.optionalKey(KafkaPosition)
})
export type LogRecord = typeof LogRecord.Type

export type AppendResult =
  | { readonly _tag: "Appended"; readonly offset: Offset; readonly id: string }
  /** Not appended: a record with the same dedupeKey (same tenant, within the window) exists. */
  | { readonly _tag: "Duplicate"; readonly offset: Offset; readonly id: string }

/**
 * Opaque resume position of a subscription, produced by the log. Store it as text (in the
 * same transaction as your projection's rows) and hand it back in `subscribe({ from })`.
 */
export type Checkpoint = string

export interface ReadOptions {
  readonly tenant: TenantFilter
  /** First offset to return (inclusive); default: the beginning. Ignored in Kafka mode. */
  readonly from?: Offset | undefined
  readonly types?: ReadonlyArray<string> | undefined
  /** Last offset to return (inclusive). */
  readonly untilOffset?: Offset | undefined
  /** Only records received at or before this instant (ms epoch). */
  readonly untilReceivedAt?: number | undefined
  /** Rows fetched per query (bounded memory); default 500. */
  readonly pageSize?: number | undefined
}

export interface SubscribeOptions {
  readonly tenant: TenantFilter
  readonly types?: ReadonlyArray<string> | undefined
  /** Resume after this checkpoint; default: the checkpoint committed for the consumer, else the start. */
  readonly from?: Checkpoint | undefined
  readonly pageSize?: number | undefined
}

/** One record of a subscription, with the checkpoint that resumes right after it. */
export interface Delivery {
  readonly record: LogRecord
  readonly checkpoint: Checkpoint
}

/** UUIDv7 (RFC 9562): 48-bit ms timestamp, version 7, variant 10, random rest. */
export const uuidv7 = (now: number): string => {
  const bytes = Crypto.randomBytes(16)
  let ts = now
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ts % 256
    ts = Math.floor(ts / 256)
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
