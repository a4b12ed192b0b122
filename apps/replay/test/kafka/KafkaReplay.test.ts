/**
 * The CLI reading the event log from a Kafka topic (read-only, from the beginning). Runs in the
 * vitest project `kafka` (its globalSetup provides `inject("kafkaBrokers")`); without that setup
 * the suite starts its own broker.
 */
import { brokersOfFile } from "@ocs/kafka-broker/testing"
import { EventLog, KafkaEventLog } from "@ocs/event-log"
import { Effect, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { cli, digest, type Fixture, makeFixture, P1, records, tempDir, TENANT } from "../fixture.ts"

const brokers = brokersOfFile()
let f: Fixture
const topic = `replay-test-${process.pid}-${Date.now()}`

beforeAll(async () => {
  f = await makeFixture()
  // The writer side: the fixture's records through the Kafka event log (outbox + relay), then
  // wait until the topic holds them all.
  const all = records()
  await Effect.runPromise(Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    for (const r of all) yield* log.append([r])
    for (let i = 0; i < 100; i++) {
      const n = yield* Stream.runCount(log.read({ tenant: "all" }))
      if (n >= all.length) return
      yield* Effect.sleep(200)
    }
    throw new Error("the relay did not deliver the records to the topic")
  }).pipe(Effect.scoped, Effect.provide(KafkaEventLog.layer({
    brokers: brokers(),
    topic,
    partitions: 3,
    outboxFilename: NodePath.join(tempDir(), "outbox.sqlite"),
    clientId: "replay-test",
    relayBackoffMillis: { initial: 50, max: 1000 }
  }))))
}, 180_000)

afterAll(async () => {
  NodeFs.rmSync(f.dir, { recursive: true, force: true })
})

const kafka = () => ["--kafka-brokers", brokers().join(","), "--topic", topic]

describe("Kafka topic", () => {
  it("stats, audit and replay read the topic from the beginning", async () => {
    const stats = await cli(["stats", ...kafka(), "--format", "json"])
    assert.strictEqual(stats.code, 0, stats.stderr)
    const s = JSON.parse(stats.stdout) as { records: number; duplicates: unknown; locks: { total: number } }
    assert.strictEqual(s.records, records().length)
    assert.strictEqual(s.locks.total, 1)
    assert.strictEqual(s.duplicates, null) // dedupe decisions stay in the writer's outbox

    const audit = await cli(["audit", ...kafka(), "--tenant", TENANT, "--entity", P1, "--format", "ndjson"])
    assert.strictEqual(audit.code, 0, audit.stderr)
    assert.deepStrictEqual(audit.stdout.trim().split("\n").map((l) => (JSON.parse(l) as { type: string }).type),
      ["productAdd", "inventoryChange", "product/list.page", "productUpdate"])

    const out = NodePath.join(f.dir, "from-kafka.sqlite")
    const replay = await cli(["replay", ...kafka(), "--out", out, "--progress", "plain"])
    assert.strictEqual(replay.code, 0, replay.stderr)
    assert.match(replay.stdout, new RegExp(`replayed ${records().length} records`))
    assert.deepStrictEqual(await digest(out), await digest(f.live))
  }, 180_000)
})
