/**
 * Read models over a topic that several servers relay into (docs/architecture.md §4.18). Each
 * server numbers its own outbox, so two servers' records carry the same outbox offsets: the
 * projection must still apply each record once, and every one of them.
 */
import { assert, describe, it } from "@effect/vitest"
import { kafkaBrokers, kafkaUnavailable } from "@ocs/kafka-broker/testing"
import { Checkpoints, EventLog, KafkaEventLog, type LogRecord } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import { Effect, Layer, Option, Stream } from "effect"
import * as NodePath from "node:path"
import { APP, BIZ, OTHER_BIZ, otherTenant, tempDir, tenant, webhook } from "../helpers.ts"

let topicSeq = 0
const topic = () => `read-models-shared-${process.pid}-${Date.now()}-${topicSeq++}`

const server = (name: string, t: string) =>
  KafkaEventLog.layer({
    brokers: kafkaBrokers(),
    topic: t,
    partitions: 3,
    outboxFilename: NodePath.join(tempDir(), `${name}-outbox.db`),
    clientId: `read-models-${name}`
  })

const appendOn = (name: string, t: string, records: ReadonlyArray<LogRecord.NewRecord>) =>
  Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    const results = yield* log.append(records)
    // Wait for the relay: the records are in the topic once a fresh read returns them all.
    const ids = new Set(results.map((r) => r.id))
    while (true) {
      const seen = yield* Stream.runCollect(log.read({ tenant: "all" }))
      if (seen.filter((r) => ids.has(r.id)).length === ids.size) return results
      yield* Effect.sleep(50)
    }
  }).pipe(Effect.provide(server(name, t)))

describe.skipIf(kafkaUnavailable())("read models over a topic shared by several servers", () => {
  it.live("records of two servers with the same outbox offset are both projected", () => {
    const t = topic()
    return Effect.gen(function*() {
      const a = yield* appendOn("a", t, [webhook(BIZ, "productAdd", { id: 1, name: "from a", code: "a" })])
      const b = yield* appendOn("b", t, [webhook(OTHER_BIZ, "productAdd", { id: 2, name: "from b", code: "b" })])
      // The collision the read models must survive: each server answered outbox offset 1.
      assert.strictEqual(a[0]!.offset, b[0]!.offset)

      const rm = yield* ReadModels.ReadModels
      const log = yield* EventLog.EventLog
      const deliveries = yield* log.subscribe("read-models", { tenant: "all" }).pipe(Stream.take(2), Stream.runCollect)
      const stats = yield* rm.project(deliveries.map((d) => d.record), { checkpoint: deliveries[1]!.checkpoint })
      assert.strictEqual(stats.records, 2)
      assert.strictEqual(Option.getOrThrow(yield* rm.product(tenant, "1")).name, "from a")
      assert.strictEqual(Option.getOrThrow(yield* rm.product(otherTenant, "2")).name, "from b")
    }).pipe(Effect.provide(Layer.mergeAll(server("reader", t), ReadModels.ReadModels.layer({ filename: NodePath.join(tempDir(), "rm.db") }))))
  }, 120_000)

  it.live("a webhook redelivered to another server is applied once", () => {
    const t = topic()
    const redelivered = { ...webhook(BIZ, "productAdd", { id: 5, name: "once", code: "r" }), dedupeKey: "webhook:redelivered-1" }
    return Effect.gen(function*() {
      // The same delivery reaches two servers: each stores it (neither saw it before).
      yield* appendOn("a", t, [redelivered])
      yield* appendOn("b", t, [redelivered])
      const rm = yield* ReadModels.ReadModels
      const log = yield* EventLog.EventLog
      const deliveries = yield* log.subscribe("read-models", { tenant: "all" }).pipe(Stream.take(2), Stream.runCollect)
      assert.strictEqual(deliveries.length, 2, "both copies are on the topic")
      const first = yield* rm.project([deliveries[0]!.record], { checkpoint: deliveries[0]!.checkpoint })
      // Projected again (a replay after a crash before the checkpoint): still the original.
      const again = yield* rm.project([deliveries[0]!.record])
      const second = yield* rm.project([deliveries[1]!.record], { checkpoint: deliveries[1]!.checkpoint })
      assert.deepStrictEqual([first.records, again.records, second.records], [1, 0, 0])
      assert.strictEqual(Option.getOrThrow(yield* rm.product(tenant, "5")).name, "once")
    }).pipe(Effect.provide(Layer.mergeAll(server("reader", t), ReadModels.ReadModels.layer({ filename: NodePath.join(tempDir(), "rm.db") }))))
  }, 120_000)

  it.live("a server's read models follow the records of every server, each applied once", () => {
    const t = topic()
    const rmFile = NodePath.join(tempDir(), "rm.db")
    const count = 20
    return Effect.gen(function*() {
      // Three servers, the same product ids in each server's business, outbox offsets 1..count each.
      const businesses = [BIZ, OTHER_BIZ, "77"]
      yield* Effect.forEach(businesses, (biz, i) =>
        appendOn(`s${i}`, t, Array.from({ length: count }, (_, k) => webhook(biz, "productAdd", { id: k + 1, name: `${biz}-${k + 1}`, code: `c${k}` }))), { discard: true })

      const followed = Effect.gen(function*() {
        const rm = yield* ReadModels.ReadModels
        yield* rm.run()
        // Until the projection's checkpoint has passed every message of the topic.
        while (true) {
          const stored = yield* rm.checkpoint()
          const next = Option.isSome(stored) ? Checkpoints.parseKafka(stored.value) : undefined
          if (next !== undefined && [...next.values()].reduce((n, o) => n + Number(o), 0) === businesses.length * count) break
          yield* Effect.sleep(50)
        }
        return yield* Effect.forEach(businesses, (biz) => Effect.map(rm.counts({ appId: APP, businessId: biz }), (c) => c.products))
      })
      const totals = yield* Effect.scoped(followed).pipe(
        // Not about change detection: the topic holds only the webhooks (no relayed changes).
        Effect.provide(Layer.mergeAll(server("reader", t), ReadModels.ReadModels.layer({ filename: rmFile, detectChanges: false })))
      )
      assert.deepStrictEqual(totals, [count, count, count])
      for (const [i, biz] of businesses.entries()) {
        const rows = yield* Effect.scoped(Effect.flatMap(ReadModels.make({ filename: rmFile }), (rm) => rm.products({ appId: APP, businessId: biz }, { limit: 100 })))
        assert.deepStrictEqual(rows.items.map((p) => p.name).sort(), Array.from({ length: count }, (_, k) => `${biz}-${k + 1}`).sort(), `server s${i}`)
      }
    })
  }, 120_000)
  it.live("a rebuild over the topic skips a copy, as the live projection does", () => {
    const t = topic()
    const dir = tempDir()
    const add = { ...webhook(BIZ, "productAdd", { id: 5, name: "v1", code: "r" }), dedupeKey: "webhook:add-5" }
    const update = { ...webhook(BIZ, "productUpdate", { id: 5, name: "v2", code: "r" }), dedupeKey: "webhook:update-5" }
    return Effect.gen(function*() {
      // Server a receives the add and then the update; the add is redelivered late to server
      // b, so its copy sits after the update in the tenant's partition.
      yield* appendOn("a", t, [add, update])
      yield* appendOn("b", t, [add])
      const live = NodePath.join(dir, "live.db")
      const rebuilt = NodePath.join(dir, "rebuilt.db")
      const result = yield* Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        const deliveries = yield* log.subscribe("read-models", { tenant: "all" }).pipe(Stream.take(3), Stream.runCollect)
        const liveStats = yield* Effect.scoped(Effect.flatMap(ReadModels.make({ filename: live }), (rm) =>
          rm.project(deliveries.map((d) => d.record), { checkpoint: deliveries[2]!.checkpoint })))
        const rebuildStats = yield* ReadModels.rebuild({ filename: rebuilt })
        return { liveStats, rebuildStats }
      }).pipe(Effect.provide(server("reader", t)))
      assert.deepStrictEqual([result.liveStats.records, result.rebuildStats.records], [2, 2])
      const [liveDigest, liveName] = yield* Effect.scoped(Effect.flatMap(ReadModels.make({ filename: live }), (rm) =>
        Effect.all([rm.digest(), Effect.map(rm.product(tenant, "5"), (p) => Option.getOrThrow(p).name)])))
      const [rebuiltDigest, rebuiltName] = yield* Effect.scoped(Effect.flatMap(ReadModels.make({ filename: rebuilt }), (rm) =>
        Effect.all([rm.digest(), Effect.map(rm.product(tenant, "5"), (p) => Option.getOrThrow(p).name)])))
      // Applied, the late copy would have put the product back to v1 (a later position wins
      // when neither carries updatedAt).
      assert.deepStrictEqual([liveName, rebuiltName], ["v2", "v2"])
      assert.deepStrictEqual(rebuiltDigest, liveDigest)
    })
  }, 120_000)
})
