/**
 * The `eventLog` section of a server's configuration, with its defaults: which log (`sqlite`,
 * the default, or `kafka`), and in Kafka mode the brokers, the topic and how servers share it.
 * The broker and topic defaults are written here and nowhere else; the decoded section always
 * holds them, so no caller repeats a fallback.
 */
import { Schema } from "effect"

export const KafkaSection = Schema.Struct({
  brokers: Schema.Array(Schema.String).check(Schema.isMinLength(1)),
  topic: Schema.String.check(Schema.isMinLength(1)),
  partitions: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
  /**
   * Caps the relay's requests (bytes). Default: the topic's `max.message.bytes` as the
   * broker reports it (Kafka's default 1,048,588 when it cannot be read).
   */
  maxRequestBytes: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1024))),
  /** The relay counts as down (ocs_loop_up 0, /readyz 503) once it has failed this long. Default 30. */
  relayDownAfterSeconds: Schema.optional(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))),
  /**
   * Several servers on this topic: each tenant's pulls are owned by one of them at a time
   * (a Kafka consumer group hands out tenant partitions). A server that gains a tenant
   * waits `handoverSeconds` (default 31: the default rate window and a second) first.
   */
  sharedPulls: Schema.optional(Schema.Struct({
    partitions: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
    handoverSeconds: Schema.optional(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)))
  }))
})
export type KafkaSection = typeof KafkaSection.Type

export const Section = Schema.Struct({
  mode: Schema.Literals(["sqlite", "kafka"]),
  /** Read in Kafka mode; `brokers` and `topic` default to `defaults.kafka`. */
  kafka: KafkaSection
})
export type Section = typeof Section.Type

/** The section's defaults: embedded SQLite; in Kafka mode a local broker and the topic `ocs-events`. */
export const defaults = {
  mode: "sqlite",
  kafka: { brokers: ["127.0.0.1:9092"], topic: "ocs-events" }
} as const

