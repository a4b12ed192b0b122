/**
 * How big a relay request may be, and how many outbox records go in one.
 *
 * The broker refuses a record batch larger than the topic's `max.message.bytes` (which, unless
 * the topic overrides it, is the broker's `message.max.bytes`: 1 MiB + 12 bytes by default).
 * kafkajs turns one `send` into one produce request per broker holding one record batch per
 * partition, uncompressed unless asked. The relay bounds the whole request by that limit, so each
 * partition's batch is below it whatever the keys spread the records to.
 *
 * Sizes are upper bounds of the record batch format v2 (the one Kafka >= 0.11 writes): each
 * varint is counted at its widest, so a batch the relay sizes under the limit is never larger on
 * the wire.
 */
import type { Admin, ConfigResourceTypes } from "kafkajs"

// DescribeConfigs resource types of the Kafka protocol. As numbers: kafkajs's enum object is not
// among the named exports Node finds in its CommonJS module.
const TOPIC_RESOURCE = 2 as ConfigResourceTypes
const BROKER_RESOURCE = 4 as ConfigResourceTypes

/** The record batch header (base offset .. record count). */
export const BATCH_OVERHEAD_BYTES = 61

/** Kafka's default `message.max.bytes` (and so `max.message.bytes`): used when the broker does not say. */
export const KAFKA_DEFAULT_LIMIT_BYTES = 1_048_588

/** Per record: length, attributes, timestamp delta, offset delta, key and value lengths, header count. */
const RECORD_OVERHEAD_BYTES = 5 + 1 + 10 + 5 + 5 + 5 + 5
/** Per header: key and value lengths. */
const HEADER_OVERHEAD_BYTES = 5 + 5

export interface OutgoingMessage {
  readonly key: string
  readonly value: string
  readonly headers: Readonly<Record<string, string>>
}

/** The most bytes `message` takes in a record batch. */
export const messageBytes = (message: OutgoingMessage): number => {
  let bytes = RECORD_OVERHEAD_BYTES + Buffer.byteLength(message.key) + Buffer.byteLength(message.value)
  for (const name in message.headers) bytes += HEADER_OVERHEAD_BYTES + Buffer.byteLength(name) + Buffer.byteLength(message.headers[name]!)
  return bytes
}

/** True when one record of `bytes` fits in a batch of its own under `limitBytes`. */
export const fitsAlone = (bytes: number, limitBytes: number): boolean => BATCH_OVERHEAD_BYTES + bytes <= limitBytes

/**
 * The largest record batch the topic accepts, as the broker says: the topic's
 * `max.message.bytes` (the effective value: the topic's override, else the broker's
 * `message.max.bytes`), else the broker's own `message.max.bytes` (when the topic's configuration
 * may not be described), else undefined.
 */
export const readBrokerLimit = async (
  admin: Admin,
  topic: string
): Promise<{ readonly bytes: number; readonly source: string } | { readonly unknown: string }> => {
  const value = (response: Awaited<ReturnType<Admin["describeConfigs"]>>, name: string): number | undefined => {
    for (const resource of response.resources) {
      if (resource.errorCode !== 0) continue
      const entry = resource.configEntries.find((e) => e.configName === name)
      const bytes = entry === undefined ? Number.NaN : Number(entry.configValue)
      if (Number.isInteger(bytes) && bytes > 0) return bytes
    }
    return undefined
  }
  const failures: Array<string> = []
  const failed = (what: string) => (error: unknown) => {
    failures.push(`${what}: ${error instanceof Error ? error.message : String(error)}`)
    return undefined
  }
  const fromTopic = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: TOPIC_RESOURCE, name: topic, configNames: ["max.message.bytes"] }]
  }).then((r) => value(r, "max.message.bytes"), failed(`topic ${topic}`))
  if (fromTopic !== undefined) return { bytes: fromTopic, source: `topic ${topic} max.message.bytes` }
  const cluster = await admin.describeCluster().catch(failed("cluster"))
  let lowest: number | undefined
  for (const broker of cluster?.brokers ?? []) {
    const bytes = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: BROKER_RESOURCE, name: String(broker.nodeId), configNames: ["message.max.bytes"] }]
    }).then((r) => value(r, "message.max.bytes"), failed(`broker ${broker.nodeId}`))
    if (bytes !== undefined) lowest = Math.min(lowest ?? bytes, bytes)
  }
  return lowest === undefined ? { unknown: failures.join("; ") || "no limit in the answers" } : { bytes: lowest, source: "broker message.max.bytes" }
}

/** The protocol error type kafkajs reports (e.g. "MESSAGE_TOO_LARGE"), looked for through its wrappers. */
export const kafkaErrorType = (error: unknown): string | undefined => {
  for (let e = error, depth = 0; e !== null && typeof e === "object" && depth < 8; depth++) {
    const type = (e as { readonly type?: unknown }).type
    if (typeof type === "string") return type
    e = (e as { readonly originalError?: unknown; readonly cause?: unknown }).originalError ?? (e as { readonly cause?: unknown }).cause
  }
  return undefined
}

/** The broker refused a batch for its size (one record of it, or the batch as a whole). */
export const isTooLarge = (error: unknown): boolean => {
  const type = kafkaErrorType(error)
  return type === "MESSAGE_TOO_LARGE" || type === "RECORD_LIST_TOO_LARGE"
}
