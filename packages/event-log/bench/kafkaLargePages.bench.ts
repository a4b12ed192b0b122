/**
 * The relay with pulled pages of full records (about 85 KB each, as a page of 100 products is),
 * on a broker with Kafka's defaults: how fast pages reach the topic when each request is bounded
 * by the topic's `max.message.bytes` (1,048,588) rather than by 500 records, and the request
 * limit the relay read from the broker.
 *
 *   ./ocs node packages/event-log/bench/kafkaLargePages.bench.ts [--quick] [--brokers host:port]
 */
import { EventLog, KafkaEventLog } from "@ocs/event-log"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { kafkaBench } from "./kafkaBench.ts"

const { quick, brokers, topicCount, close } = await kafkaBench()
const pages = quick ? 200 : 1000
const topic = `large-pages-${Date.now()}`
const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "kafka-large-pages-"))

/** A page of 100 products of about 850 bytes each. */
const page = (p: number) =>
  JSON.stringify({
    code: 1,
    data: Array.from({ length: 100 }, (_, i) => ({
      id: p * 100 + i,
      name: `product ${p * 100 + i}`,
      code: `SKU-${p}-${i}`,
      price: 1000 + i,
      description: "d".repeat(700)
    })),
    paginator: { next: { id: p * 100 + 99 } }
  })

const program = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  const progress = yield* KafkaEventLog.RelayProgress
  const bodies = Array.from({ length: pages }, (_, p) => page(p))
  const bytes = bodies.reduce((n, b) => n + b.length, 0)
  const t = performance.now()
  // Ten tenants pulling at once, a page per append.
  let next = 0
  yield* Effect.forEach(Array.from({ length: 10 }), () =>
    Effect.whileLoop({
      while: () => next < pages,
      body: () => {
        const p = next++
        return log.append([{ appId: "1", businessId: String(2000 + (p % 10)), source: "sync", type: "pos:/v3.0/product/list", body: bodies[p]! }])
      },
      step: () => undefined
    }), { concurrency: "unbounded", discard: true })
  const appendMs = performance.now() - t
  while ((yield* Effect.promise(() => topicCount(topic))) < pages) yield* Effect.sleep(10)
  const relayMs = performance.now() - t
  const status = yield* progress.status
  const mb = bytes / 1024 / 1024
  console.log(
    `${pages} pages (${mb.toFixed(1)} MiB, ${Math.round(bytes / pages / 1024)} KiB each): append ${Math.round(pages / (appendMs / 1000))} pages/s; ` +
      `append+relay ${Math.round(pages / (relayMs / 1000))} pages/s, ${(mb / (relayMs / 1000)).toFixed(1)} MiB/s; ` +
      `request limit ${status.limitBytes} bytes (${status.limitSource}); dead letters ${status.deadLetters}`
  )
})

await Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(KafkaEventLog.layer({
  brokers,
  topic,
  partitions: 6,
  outboxFilename: NodePath.join(dir, "outbox.db"),
  clientId: "large-pages"
}))))
await close()
