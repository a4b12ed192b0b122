/**
 * The relay against a broker with Kafka's default limits (the `kafka` project's broker runs with
 * them): requests bounded by bytes, a record larger than the topic accepts set aside (and
 * redriven once the limit is raised), a limit lowered while running, and a broker that refuses
 * every request shown as a relay that is down.
 */
import { assert, describe, it } from "@effect/vitest"
import { brokersOfFile } from "@ocs/kafka-broker/testing"
import { EventLog, KafkaEventLog, type LogRecord } from "@ocs/event-log"
import { SqliteDatabase } from "@ocs/sqlite"
import { Effect, Stream } from "effect"
import { ConfigResourceTypes, Kafka, logLevel } from "kafkajs"
import * as NodePath from "node:path"
import { tempDir, webhook } from "../helpers.ts"

const brokers = brokersOfFile()

/** Kafka's default `message.max.bytes`, which a topic's `max.message.bytes` inherits. */
const KAFKA_DEFAULT_LIMIT = 1_048_588

let topicSeq = 0
const options = (extra: Partial<KafkaEventLog.Options> = {}): KafkaEventLog.Options => ({
  brokers: brokers(),
  topic: `relay-limits-${process.pid}-${Date.now()}-${topicSeq++}`,
  partitions: 3,
  outboxFilename: NodePath.join(tempDir(), "outbox.db"),
  clientId: "relay-limits-test",
  relayBackoffMillis: { initial: 50, max: 500 },
  retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 200 },
  producerRetry: { retries: 1, initialRetryTime: 100, maxRetryTime: 200 },
  ...extra
})

const pollUntil = <A, E, R>(self: Effect.Effect<A, E, R>, done: (a: A) => boolean, tries = 600): Effect.Effect<A, E | string, R> =>
  Effect.flatMap(self, (a) =>
    done(a) ? Effect.succeed(a) : tries <= 0 ? Effect.fail("gave up waiting") : Effect.flatMap(Effect.sleep(100), () => pollUntil(self, done, tries - 1)))

const withAdmin = <A>(f: (admin: ReturnType<Kafka["admin"]>) => Promise<A>) =>
  Effect.promise(async () => {
    const admin = new Kafka({ brokers: [...brokers()], logLevel: logLevel.NOTHING }).admin()
    await admin.connect()
    try {
      return await f(admin)
    } finally {
      await admin.disconnect()
    }
  })

const topicMessages = (topic: string) =>
  withAdmin(async (admin) => (await admin.fetchTopicOffsets(topic)).reduce((n, o) => n + Number(o.high) - Number(o.low), 0))

const setTopicConfig = (topic: string, name: string, value: string) =>
  withAdmin((admin) => admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name, value }] }] }))

const readAll = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  return yield* Stream.runCollect(log.read({ tenant: "all" }))
})

/** A body of about `bytes` bytes, numbered so order can be checked. */
const bigBody = (business: string, seq: number, bytes: number) => JSON.stringify({ business, seq, pad: "x".repeat(bytes) })

const seqOf = (record: LogRecord.LogRecord) => (JSON.parse(record.body) as { readonly seq: number }).seq

const outboxCount = (filename: string) =>
  Effect.scoped(Effect.flatMap(SqliteDatabase.make({ filename }), (db) =>
    db.use("count", (_, c) => (c.prepare("SELECT count(*) AS n FROM records").get() as { n: number }).n)))

describe("KafkaEventLog relay limits", () => {
  it.live("relays records past 1 MB in total, sized under the topic's limit read from the broker", () => {
    const config = options()
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const progress = yield* KafkaEventLog.RelayProgress
      // 40 records of 80 KB in one append: one outbox page of 3.2 MB, three times the limit.
      yield* log.append(Array.from({ length: 40 }, (_, i) => webhook(String(i % 4), bigBody(String(i % 4), i, 80_000))))
      yield* pollUntil(topicMessages(config.topic), (n) => n >= 40)
      const status = yield* progress.status
      assert.strictEqual(status.limitBytes, KAFKA_DEFAULT_LIMIT)
      assert.strictEqual(status.limitSource, `topic ${config.topic} max.message.bytes`, "read from the broker")
      assert.isTrue(status.up)
      assert.strictEqual(status.deadLetters, 0)
      const records = yield* readAll
      assert.strictEqual(records.length, 40)
      for (const b of ["0", "1", "2", "3"]) {
        const mine = records.filter((r) => r.businessId === b).map(seqOf)
        assert.deepStrictEqual(mine, [...mine].sort((x, y) => x - y), `business ${b} out of order`)
        assert.strictEqual(mine.length, 10)
      }
    }).pipe(Effect.provide(KafkaEventLog.layer(config)))
  }, 120_000)

  it.live("sets aside a record larger than the topic accepts, relays the rest, redrives it once the limit is raised", () => {
    const config = options()
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const progress = yield* KafkaEventLog.RelayProgress
      const appended = yield* log.append([
        ...Array.from({ length: 10 }, (_, i) => webhook("7", bigBody("7", i, 60_000))),
        webhook("7", bigBody("7", 10, 1_200_000)),
        ...Array.from({ length: 10 }, (_, i) => webhook("7", bigBody("7", 11 + i, 60_000)))
      ])
      const bigOffset = appended[10]!.offset
      yield* pollUntil(progress.relayed, (at) => at >= appended[20]!.offset)
      assert.strictEqual(yield* topicMessages(config.topic), 20)
      const letters = yield* progress.deadLetters
      assert.strictEqual(letters.length, 1)
      assert.strictEqual(letters[0]!.offset, bigOffset)
      assert.strictEqual(letters[0]!.tenant, "9007199254740993123:7")
      assert.isAbove(letters[0]!.bytes, KAFKA_DEFAULT_LIMIT)
      assert.strictEqual(letters[0]!.limitBytes, KAFKA_DEFAULT_LIMIT)
      assert.strictEqual((yield* progress.status).deadLetters, 1)
      assert.isTrue((yield* progress.status).up, "a record set aside is not a relay failure")
      // Nothing lost: the record is still in the outbox.
      assert.strictEqual(yield* outboxCount(config.outboxFilename), 21)
      assert.deepStrictEqual((yield* readAll).map(seqOf), [...Array.from({ length: 10 }, (_, i) => i), ...Array.from({ length: 10 }, (_, i) => 11 + i)])

      // Still too large: the redrive leaves it waiting.
      assert.deepStrictEqual(yield* progress.redrive, { redriven: 0, stillTooLarge: 1 })
      yield* setTopicConfig(config.topic, "max.message.bytes", String(2 * 1024 * 1024))
      assert.deepStrictEqual(yield* progress.redrive, { redriven: 1, stillTooLarge: 0 })
      assert.strictEqual((yield* progress.deadLetters).length, 0)
      assert.strictEqual((yield* progress.status).deadLetters, 0)
      const after = yield* readAll
      assert.strictEqual(after.length, 21, "a redriven record is not taken for a relay repeat")
      assert.strictEqual(seqOf(after[after.length - 1]!), 10)
    }).pipe(Effect.provide(KafkaEventLog.layer(config)))
  }, 120_000)

  it.live("a limit lowered while running: the refused batch is split, every record still relayed", () => {
    const config = options()
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const progress = yield* KafkaEventLog.RelayProgress
      assert.strictEqual((yield* progress.status).limitBytes, KAFKA_DEFAULT_LIMIT)
      yield* setTopicConfig(config.topic, "max.message.bytes", "100000")
      yield* log.append(Array.from({ length: 20 }, (_, i) => webhook("3", bigBody("3", i, 30_000))))
      yield* pollUntil(topicMessages(config.topic), (n) => n >= 20)
      const status = yield* progress.status
      assert.strictEqual(status.limitBytes, 100_000)
      assert.strictEqual(status.deadLetters, 0)
      assert.deepStrictEqual((yield* readAll).map(seqOf), Array.from({ length: 20 }, (_, i) => i))
    }).pipe(Effect.provide(KafkaEventLog.layer(config)))
  }, 120_000)

  it.live("a broker that refuses every request turns the relay down, with the reason; it is up again once they pass", () => {
    const config = options({ relayDownAfterMillis: 1000 })
    return Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const progress = yield* KafkaEventLog.RelayProgress
      // The topic removed (topics are not created on demand): every produce is refused.
      yield* withAdmin((admin) => admin.deleteTopics({ topics: [config.topic] }))
      yield* log.append([webhook("5", bigBody("5", 0, 100))])
      const down = yield* pollUntil(progress.status, (s) => !s.up)
      assert.isNotNull(down.failingSince)
      assert.isAtLeast(down.failures, 1)
      assert.isString(down.lastError)
      yield* withAdmin((admin) => admin.createTopics({ waitForLeaders: true, topics: [{ topic: config.topic, numPartitions: 3, replicationFactor: 1 }] }))
      yield* pollUntil(topicMessages(config.topic), (n) => n >= 1)
      const up = yield* pollUntil(progress.status, (s) => s.up)
      assert.isNull(up.failingSince)
      assert.strictEqual(up.failures, 0)
    }).pipe(Effect.provide(KafkaEventLog.layer(config)))
  }, 120_000)
})
