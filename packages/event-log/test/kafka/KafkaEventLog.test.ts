/**
 * KafkaEventLog against a real broker. Runs in the vitest project `kafka`, whose globalSetup
 * (tooling/kafka/src/globalSetup.ts) provides `inject("kafkaBrokers")`. Without that setup the
 * suite starts its own broker. The outage test always starts its own, to stop and restart it.
 */
import { assert, describe, it } from "@effect/vitest"
import { startBroker } from "@ocs/kafka-broker"
import { brokersOfFile } from "@ocs/kafka-broker/testing"
import { Checkpoints, EventLog, KafkaEventLog, LogRecord } from "@ocs/event-log"
import { SqliteDatabase } from "@ocs/sqlite"
import { Effect, Layer, Stream } from "effect"
import { Kafka, logLevel } from "kafkajs"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { APP, tempDir, webhook } from "../helpers.ts"

const brokers = brokersOfFile()

let topicSeq = 0
const options = (extra: Partial<KafkaEventLog.Options> = {}): KafkaEventLog.Options => ({
  brokers: brokers(),
  topic: `event-log-test-${process.pid}-${Date.now()}-${topicSeq++}`,
  partitions: 3,
  outboxFilename: NodePath.join(tempDir(), "outbox.db"),
  clientId: "event-log-test",
  relayBackoffMillis: { initial: 50, max: 1000 },
  ...extra
})

const readAll = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  return yield* Stream.runCollect(log.read({ tenant: "all" }))
})

const pollUntil = <A, E, R>(self: Effect.Effect<A, E, R>, done: (a: A) => boolean, tries = 300): Effect.Effect<A, E | string, R> =>
  Effect.flatMap(self, (a) =>
    done(a) ? Effect.succeed(a) : tries <= 0 ? Effect.fail("gave up waiting") : Effect.flatMap(Effect.sleep(100), () => pollUntil(self, done, tries - 1)))

const appendBusinesses = (businesses: ReadonlyArray<string>, each: number, from = 0) =>
  Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    yield* Effect.forEach(businesses, (b) =>
      Effect.forEach(Array.from({ length: each }, (_, i) => from + i), (i) =>
        log.append([webhook(b, `{"b":${b},"seq":${i},"big":123456789012345678901234}`)]), { discard: true }), { concurrency: "unbounded", discard: true })
  })

const assertOrderPerBusiness = (records: ReadonlyArray<LogRecord.LogRecord>, businesses: ReadonlyArray<string>, each: number) => {
  for (const b of businesses) {
    const mine = records.filter((r) => r.businessId === b)
    assert.deepStrictEqual(mine.map((r) => r.body), Array.from({ length: each }, (_, i) => `{"b":${b},"seq":${i},"big":123456789012345678901234}`))
    assert.strictEqual(new Set(mine.map((r) => r.kafka?.partition)).size, 1, `business ${b} spans partitions`)
  }
}

const topicMessages = (topic: string) =>
  Effect.promise(async () => {
    const admin = new Kafka({ brokers: [...brokers()], logLevel: logLevel.NOTHING }).admin()
    await admin.connect()
    try {
      const offsets = await admin.fetchTopicOffsets(topic)
      return offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0)
    } finally {
      await admin.disconnect()
    }
  })

describe("KafkaEventLog", () => {
  it.live("appends through the outbox and reads back in order per business; subscribe resumes", () => {
    const config = options()
    const businesses = ["1", "2", "3", "4"]
    return Effect.gen(function*() {
      yield* appendBusinesses(businesses, 15)
      const records = yield* pollUntil(readAll, (r) => r.length >= 60)
      assert.strictEqual(records.length, 60)
      assertOrderPerBusiness(records, businesses, 15)
      const log = yield* EventLog.EventLog
      const tenant = yield* Stream.runCollect(log.read({ tenant: `${APP}:2` }))
      assert.deepStrictEqual(tenant.map((r) => r.businessId), Array(15).fill("2"))

      const first = yield* log.subscribe("projector", { tenant: "all" }).pipe(Stream.take(25), Stream.runCollect)
      yield* log.commit("projector", first[24]!.checkpoint)
      const rest = yield* log.subscribe("projector", { tenant: "all" }).pipe(Stream.take(35), Stream.runCollect)
      const ids = [...first, ...rest].map((d) => d.record.id)
      assert.strictEqual(new Set(ids).size, 60, "resume repeated or skipped records")

      // A subscription to some partitions only: exactly their records, and checkpoints naming them only.
      const partitionOf = new Map(records.map((r) => [r.id, r.kafka!.partition]))
      const wanted = [...new Set(partitionOf.values())].sort()[0]!
      const count = records.filter((r) => r.kafka!.partition === wanted).length
      const own = yield* log.subscribe("some", { tenant: "all", partitions: [wanted] }).pipe(Stream.take(count), Stream.runCollect)
      assert.deepStrictEqual(new Set(own.map((d) => d.record.kafka!.partition)), new Set([wanted]))
      assert.deepStrictEqual([...Checkpoints.parseKafka(own[count - 1]!.checkpoint)!.keys()], [wanted])
      // Resuming from the middle with a checkpoint of that partition delivers the rest of it only.
      const resumed = yield* log.subscribe("some", { tenant: "all", partitions: [wanted], from: own[4]!.checkpoint }).pipe(Stream.take(count - 5), Stream.runCollect)
      assert.deepStrictEqual(resumed.map((d) => d.record.id), own.slice(5).map((d) => d.record.id))
    }).pipe(Effect.provide(KafkaEventLog.layer(config)))
  }, 120_000)

  it.live("a relay retry (cursor lost after the broker acked) never shows twice", () => {
    const config = options()
    return Effect.gen(function*() {
      yield* Effect.gen(function*() {
        yield* appendBusinesses(["1", "2"], 10)
        yield* pollUntil(topicMessages(config.topic), (n) => n >= 20)
      }).pipe(Effect.provide(KafkaEventLog.layer(config)))
      // Simulate a crash between the broker's ack and the cursor update.
      yield* Effect.scoped(Effect.flatMap(SqliteDatabase.make({ filename: config.outboxFilename }), (db) =>
        db.use("reset", (_, c) => c.prepare("UPDATE relay_state SET relayed_offset = 0").run())))
      yield* Effect.gen(function*() {
        yield* pollUntil(topicMessages(config.topic), (n) => n >= 40)
        const records = yield* readAll
        assert.strictEqual(records.length, 20)
        assertOrderPerBusiness(records, ["1", "2"], 10)
        const log = yield* EventLog.EventLog
        const delivered = yield* log.subscribe("p", { tenant: "all" }).pipe(Stream.take(20), Stream.runCollect)
        assert.strictEqual(new Set(delivered.map((d) => d.record.id)).size, 20)
      }).pipe(Effect.provide(KafkaEventLog.layer(config)))
    })
  }, 120_000)

  it.live("a relay repeat is dropped after the subscriber restarted from its checkpoint", () => {
    const config = options()
    return Effect.gen(function*() {
      yield* Effect.gen(function*() {
        yield* appendBusinesses(["1", "2"], 10)
        yield* pollUntil(topicMessages(config.topic), (n) => n >= 20)
        const log = yield* EventLog.EventLog
        const first = yield* log.subscribe("p", { tenant: "all" }).pipe(Stream.take(20), Stream.runCollect)
        yield* log.commit("p", first[19]!.checkpoint)
      }).pipe(Effect.provide(KafkaEventLog.layer(config)))
      // A crash between the broker's ack and the relay cursor: the next start sends all again.
      yield* Effect.scoped(Effect.flatMap(SqliteDatabase.make({ filename: config.outboxFilename }), (db) =>
        db.use("reset", (_, c) => c.prepare("UPDATE relay_state SET relayed_offset = 0").run())))
      yield* Effect.gen(function*() {
        yield* pollUntil(topicMessages(config.topic), (n) => n >= 40)
        // One new record per business after the repeats: the subscriber must see only these.
        yield* appendBusinesses(["1", "2"], 1, 10)
        const log = yield* EventLog.EventLog
        const after = yield* log.subscribe("p", { tenant: "all" }).pipe(Stream.take(2), Stream.runCollect)
        assert.deepStrictEqual(after.map((d) => JSON.parse(d.record.body).seq), [10, 10])
      }).pipe(Effect.provide(KafkaEventLog.layer(config)))
    })
  }, 120_000)

  it.live("records of two outboxes on one topic get distinct offsets and keep their outbox offsets", () => {
    const a = options()
    const b = options({ topic: a.topic })
    return Effect.gen(function*() {
      const appended = yield* Effect.forEach([a, b], (config, i) =>
        Effect.gen(function*() {
          const log = yield* EventLog.EventLog
          const results = yield* log.append([webhook(String(i + 1), `{"from":${i}}`)])
          yield* pollUntil(topicMessages(config.topic), (n) => n >= i + 1)
          return results[0]!
        }).pipe(Effect.provide(KafkaEventLog.layer(config))))
      assert.strictEqual(appended[0]!.offset, appended[1]!.offset)
      const records = yield* readAll.pipe(Effect.provide(KafkaEventLog.layer(a)))
      assert.strictEqual(records.length, 2)
      assert.strictEqual(new Set(records.map((r) => r.offset)).size, 2)
      assert.deepStrictEqual(records.map((r) => r.kafka?.outboxOffset), [appended[0]!.offset, appended[0]!.offset])
      assert.strictEqual(new Set(records.map((r) => r.kafka?.origin)).size, 2)
      for (const r of records) assert.strictEqual(r.offset, LogRecord.topicPosition(r.kafka!.partition, r.kafka!.offset))
    })
  }, 120_000)

  it.live("fails to start with KafkaUnavailable when the broker cannot be reached", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const server = NodeNet.createServer().listen(0, "127.0.0.1", () => {
            const address = server.address() as NodeNet.AddressInfo
            server.close(() => resolve(address.port))
          })
        }))
      const error = yield* Layer.build(KafkaEventLog.layer(options({
        brokers: [`127.0.0.1:${port}`],
        retry: { retries: 0 },
        connectionTimeoutMillis: 1000
      }))).pipe(Effect.scoped, Effect.flip)
      assert.strictEqual(error._tag, "KafkaUnavailable")
      assert.include(error.message, `127.0.0.1:${port}`)
    }), 30_000)

  it.live("appends while the broker is down are kept and relayed when it is back", () =>
    Effect.gen(function*() {
      const broker = yield* Effect.acquireRelease(Effect.promise(() => startBroker()), (b) => Effect.promise(() => b.close()))
      const config = options({ brokers: broker.brokers })
      yield* Effect.gen(function*() {
        yield* appendBusinesses(["1", "2"], 5)
        yield* pollUntil(readAll, (r) => r.length >= 10)
        yield* Effect.promise(() => broker.stopProcess())
        // Durable in the outbox, acknowledged without the broker.
        yield* appendBusinesses(["1", "2"], 5, 5).pipe(Effect.timeout("5 seconds"))
        yield* Effect.promise(() => broker.startProcess())
        const records = yield* pollUntil(readAll.pipe(Effect.orElseSucceed(() => [])), (r) => r.length >= 20)
        assert.strictEqual(records.length, 20)
        assertOrderPerBusiness(records, ["1", "2"], 10)
      }).pipe(Effect.provide(KafkaEventLog.layer(config)))
    }).pipe(Effect.scoped), 180_000)
})
