/**
 * Plugins over a topic that several servers relay into (docs/architecture.md §4.19): a webhook
 * redelivered to another server is on the topic twice under one dedupe key, and a plugin is
 * delivered it once, across a restart of the runtime too.
 */
import { assert, describe, it } from "@effect/vitest"
import { kafkaBrokers, kafkaUnavailable } from "@ocs/kafka-broker/testing"
import { EventLog, KafkaEventLog, type LogRecord } from "@ocs/event-log"
import { definePlugin } from "@ocs/plugin-sdk"
import { PluginRuntime } from "@ocs/plugin-runtime"
import { ReadModels } from "@ocs/read-models"
import { Effect, Layer, Stream } from "effect"
import * as NodePath from "node:path"
import { files, webhookRecord } from "../helpers.ts"

let topicSeq = 0
const topic = () => `plugins-shared-${process.pid}-${Date.now()}-${topicSeq++}`

const server = (dir: string, name: string, t: string) =>
  KafkaEventLog.layer({
    brokers: kafkaBrokers(),
    topic: t,
    partitions: 3,
    outboxFilename: NodePath.join(dir, `${name}-outbox.db`),
    clientId: `plugins-${name}`
  })

/** Appends on one server and waits until a fresh read of the topic returns the records. */
const appendOn = (dir: string, name: string, t: string, records: ReadonlyArray<LogRecord.NewRecord>) =>
  Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    const ids = new Set((yield* log.append(records)).map((r) => r.id))
    while (true) {
      const seen = yield* Stream.runCollect(log.read({ tenant: "all" }))
      if (seen.filter((r) => ids.has(r.id)).length === ids.size) return
      yield* Effect.sleep(50)
    }
  }).pipe(Effect.provide(server(dir, name, t)))

const order = (id: number, dedupeKey: string) => ({
  ...webhookRecord("orderAdd", { info: { id, status: 54 }, channel: { appOrderId: `A-${id}` } }),
  dedupeKey
})

describe.skipIf(kafkaUnavailable())("plugins over a topic shared by several servers", () => {
  it.live("a webhook redelivered to another server is delivered once, across a restart", () => {
    const f = files()
    const t = topic()
    const seen: Array<string> = []
    const recorder = definePlugin({
      name: "recorder",
      version: "1.0.0",
      subscribes: ["OrderAdded"],
      handle: (event) => Effect.sync(() => seen.push(event.appOrderId ?? "?"))
    })
    // A reader server running the plugin; its plugins file outlives each run.
    const reader = Layer.provideMerge(
      PluginRuntime.PluginRuntime.layer({ filename: f.plugins, plugins: [{ plugin: recorder }] }),
      Layer.mergeAll(server(f.dir, "reader", t), ReadModels.ReadModels.layer({ filename: f.rm }))
    )
    /** Runs the reader until the plugin has handled `appOrderId`, then stops it. */
    const runUntil = (appOrderId: string) =>
      Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(reader)
        while (!seen.includes(appOrderId)) yield* Effect.sleep(50)
      }))
    return Effect.gen(function*() {
      // Server a receives the delivery, the plugin handles it, the reader stops.
      yield* appendOn(f.dir, "a", t, [order(7, "webhook:delivery-7")])
      yield* runUntil("A-7")
      // The same delivery reaches server b (b never saw it), then another webhook of the tenant
      // (same partition, so behind the copy).
      yield* appendOn(f.dir, "b", t, [order(7, "webhook:delivery-7"), order(8, "webhook:delivery-8")])
      const copies = yield* Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        return yield* Stream.runCollect(log.read({ tenant: "all" }))
      }).pipe(
        Effect.provide(server(f.dir, "probe", t))
      )
      assert.strictEqual(copies.filter((r) => r.dedupeKey === "webhook:delivery-7").length, 2, "both copies are on the topic")
      // A new runtime over the same plugins file skips the copy and handles what follows.
      yield* runUntil("A-8")
      assert.deepStrictEqual(seen, ["A-7", "A-8"])
    })
  }, 180_000)
})
