/**
 * Where the time of Kafka mode goes, stage by stage, on one broker: appends into the outbox,
 * the relay (outbox -> topic), and the subscription (topic -> deliveries), each timed alone.
 *
 *   ./ocs node packages/event-log/bench/kafkaStages.bench.ts [--quick] [--brokers host:port]
 */
import { EventLog, KafkaEventLog } from "@ocs/event-log"
import { Effect, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { kafkaBench } from "./kafkaBench.ts"

const { quick, brokers, topicCount, close } = await kafkaBench()
const n = quick ? 5000 : 50_000
const topic = `stages-${Date.now()}`
const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kafka-stages-"))

const body = (i: number) => JSON.stringify({ event: "productAdd", businessId: 1000 + (i % 30), data: { id: i, name: `p${i}`, price: i } })

const program = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  let t = performance.now()
  // 32 concurrent appenders of one record each, as webhooks arrive.
  let next = 0
  yield* Effect.forEach(Array.from({ length: 32 }), () =>
    Effect.whileLoop({
      while: () => next < n,
      body: () => {
        const i = next++
        return log.append([{ appId: "1", businessId: String(1000 + (i % 30)), source: "webhook", type: "productAdd", body: body(i) }])
      },
      step: () => undefined
    }), { concurrency: "unbounded", discard: true })
  const appendMs = performance.now() - t
  // The relay started with the first append: wait until the topic holds everything.
  while ((yield* Effect.promise(() => topicCount(topic))) < n) yield* Effect.sleep(10)
  const relayMs = performance.now() - t
  t = performance.now()
  yield* log.subscribe("stages", { tenant: "all" }).pipe(Stream.take(n), Stream.runDrain)
  const consumeMs = performance.now() - t
  const rate = (ms: number) => Math.round(n / (ms / 1000))
  console.log(`${n} records: append ${rate(appendMs)}/s; append+relay ${rate(relayMs)}/s; subscribe ${rate(consumeMs)}/s`)
})

await Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(KafkaEventLog.layer({
  brokers,
  topic,
  partitions: 6,
  outboxFilename: NodePath.join(dir, "outbox.db"),
  clientId: "stages"
}))))
await close()
