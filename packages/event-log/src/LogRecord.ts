/**
 * The record of the event log (docs/architecture.md, section 5) and the values around it.
 *
 * A record is a fact as received: `body` is the exact text (byte-identical once encoded as
 * UTF-8), never re-serialised. Ids and businessIds are strings of digits because they may
 * exceed 2^53. The fields of each shape are listed once, in ./internal/recordFields.ts; the
 * types here and the append check are derived from those lists.
 */
import { Ids } from "@ocs/protocol"
import * as Crypto from "node:crypto"
import * as Field from "./internal/fields.ts"
import { newRecordFields, recordFields } from "./internal/recordFields.ts"

/** Position in one log: strictly increasing, never reused. SQLite rowid, so a safe integer. */
export type Offset = number

/** `${appId}:${businessId}`; `${appId}:` for application-level facts (webhooksEnabled). */
export type TenantKey = Ids.TenantKey


/** Either one tenant, or the explicit `"all"` a replay uses. There is no implicit default. */
export type TenantFilter = TenantKey | "all"

export type Source = Field.Source

/** A JSON object (values may hold bigints; they are written losslessly). */
export type Meta = { readonly [key: string]: unknown }

/** What a caller appends. Missing `id` becomes a UUIDv7, missing `receivedAt` the clock's now. */
export type NewRecord = Field.Shape<typeof newRecordFields>

/**
 * The check `append` runs on every record: `undefined` when `u` is a valid NewRecord, else
 * what is wrong, naming the field (`field "appId" must be a string of digits, got "12a"`).
 * `u` may be any object (other keys are ignored); `meta`, when present, must be a plain object.
 */
export const checkNewRecord: (u: unknown) => string | undefined = Field.check(newRecordFields)

/** Where a record sits in Kafka (Kafka mode only). */
export interface KafkaPosition {
  readonly partition: number
  readonly offset: string
  /** The outbox that relayed it (one per server's outbox file); absent on older messages. */
  readonly origin?: string | undefined
  /** Its offset in that outbox (what `append` answered on the server that received it). */
  readonly outboxOffset?: number | undefined
}

/**
 * Kafka mode: the `offset` a record is delivered with, from its place in the topic. Unique
 * across every server relaying into the topic (outbox offsets are not: each server numbers its
 * own) and increasing within a partition, so within a business (docs/architecture.md §4.18).
 * Room for 8192 partitions of 2^40 messages each.
 */
export const topicPosition = (partition: number, offset: string): Offset => partition * 2 ** 40 + Number(offset)

export type LogRecord = Field.Shape<typeof recordFields> & {
  /** Kafka mode only: the partition and offset of the record in the topic. */
  readonly kafka?: KafkaPosition
}

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
  /**
   * Kafka mode: read these partitions of the topic only (the others are not delivered, and
   * their positions are not in the checkpoints). Ignored by the SQLite log, which has none.
   */
  readonly partitions?: ReadonlyArray<number> | undefined
}

/** A reader's distance from the log's head: records not handled yet, and the age of the oldest. */
export interface Lag {
  readonly records: number
  /** Seconds since the oldest record after the reader's position was received (0 when none). */
  readonly seconds: number
}

/** One record of a subscription, with the checkpoint that resumes right after it. */
export interface Delivery {
  readonly record: LogRecord
  readonly checkpoint: Checkpoint
}

const HEX_DIGITS = Buffer.from("0123456789abcdef", "latin1")

// Random bytes for ids, drawn from the CSPRNG 4 KiB at a time (one call per ~400 ids instead
// of one per id); every byte is used once. Module-private: never handed out.
const POOL_SIZE = 4096
const pool = Buffer.allocUnsafeSlow(POOL_SIZE)
let poolOffset = POOL_SIZE

// The id's 36 characters are written here and read out as one string: one allocation per id,
// where joining 21 pieces built a rope of 20 nodes (measured: 0.12 instead of 0.55-0.84 µs
// per id, about 90 instead of 340-590 bytes).
const text = Buffer.allocUnsafeSlow(36)
const hexAt = (at: number, byte: number): void => {
  text[at] = HEX_DIGITS[byte >>> 4]!
  text[at + 1] = HEX_DIGITS[byte & 0x0f]!
}

/** UUIDv7 (RFC 9562): 48-bit ms timestamp, version 7, variant 10, random rest. */
export const uuidv7 = (now: number): string => {
  if (poolOffset + 10 > POOL_SIZE) {
    Crypto.randomFillSync(pool)
    poolOffset = 0
  }
  const r = poolOffset
  poolOffset += 10
  const ts = Math.max(0, Math.trunc(now)) % 2 ** 48
  const high = Math.floor(ts / 2 ** 16) // 32 bits
  const low = ts % 2 ** 16 // 16 bits
  hexAt(0, (high >>> 24) & 0xff)
  hexAt(2, (high >>> 16) & 0xff)
  hexAt(4, (high >>> 8) & 0xff)
  hexAt(6, high & 0xff)
  text[8] = 0x2d // "-"
  hexAt(9, low >>> 8)
  hexAt(11, low & 0xff)
  text[13] = 0x2d
  hexAt(14, 0x70 | (pool[r]! & 0x0f))
  hexAt(16, pool[r + 1]!)
  text[18] = 0x2d
  hexAt(19, 0x80 | (pool[r + 2]! & 0x3f))
  hexAt(21, pool[r + 3]!)
  text[23] = 0x2d
  for (let i = 0; i < 6; i++) hexAt(24 + 2 * i, pool[r + 4 + i]!)
  return text.toString("latin1", 0, 36)
}
