/**
 * Kafka outage: in Kafka mode the broker (our own, so we can stop it) is down for 30 s while
 * webhooks keep arriving. Properties: no webhook refused or lost (ingestion commits to the
 * local outbox and answers 200); after the broker is back the relay catches up; per business
 * the topic keeps the sending order; the read models end up with everything.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { Kafka, logLevel } from "kafkajs"
import { type KafkaBroker, startBroker } from "@ocs/kafka-broker"
import { Ids } from "@ocs/protocol"
import { admin, agent, envelope, eventually, request, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

const TOPIC = "ocs-reliability-events"
const OUTAGE_MS = 30_000
const BEFORE_MS = 5_000
const AFTER_MS = 5_000
const GAP_MS = 40

// Registered before the suite: the broker starts first and closes last.
let broker: KafkaBroker | undefined
beforeAll(async () => {
  broker = await startBroker({ logLevel: "WARN" })
}, 180_000)
afterAll(async () => {
  await broker?.close()
})

const tenants: Array<Tenant> = []
const simProducts = new Map<string, number>()
const suite = reliabilitySuite({
  simFlags: ["--rate-window", "3", "--products", "10"],
  setup: async (s) => {
    for (let i = 0; i < 4; i++) {
      const t = await s.tenant({ products: 5, orders: 0 })
      tenants.push(t)
      simProducts.set(t.appId, (await s.control.business(t.businessId)).counts?.products ?? 5)
    }
  },
  setupTimeoutMs: 180_000
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("kafka outage", () => {
  it("answers every webhook 200 while the broker is down, then relays everything in per-business order", async () => {
    const server = suite.server("ocs-rel-kafka-", {
      tenants,
      extra: { eventLog: { mode: "kafka", kafka: { brokers: broker!.brokers, topic: TOPIC, partitions: 3 } } }
    })
    await server.start()
    const url = server.url
    // The webhooks below are of products the simulator never had: a full pass that starts after
    // one of them arrived rightly finds it deleted on the service (docs/architecture.md §4.14).
    // So they start once every tenant's first product pass is done; on a loaded machine that
    // pass can start seconds after the server does.
    for (const t of tenants) {
      await eventually(`the first product pass of ${t.appId}`, async () => {
        const { body } = await admin(url, `/admin/tenants/${t.appId}/${t.businessId}`)
        return (body.sync as Array<any>).find((s) => s.resource === "pos:/v3.0/product/list")?.fullCompletedAt != null ? true : undefined
      }, 60_000, 250)
    }

    // One sender per business, one request at a time, so that the sending order is the order.
    const http = agent(tenants.length)
    const sent = new Map<string, number>()
    const failures: Array<string> = []
    const run = { sending: true }
    let duringOutage = 0
    let outage = false
    const senders = tenants.map(async (t) => {
      let seq = 0
      while (run.sending) {
        const body = envelope(t, "productAdd", { id: 9_000_000 + seq, name: `kseq ${seq}`, price: seq, seq, updatedAt: new Date(Date.UTC(2025, 0, 1) + seq * 1000).toISOString() })
        const a = await request(`${url}/webhooks/${t.appId}`, { body, agent: http })
        if (a.status !== 200) failures.push(`${t.appId} seq ${seq}: ${a.status} ${a.text.slice(0, 200)}`)
        if (outage) duringOutage++
        seq++
        await sleep(GAP_MS)
      }
      sent.set(t.appId, seq)
    })
    await sleep(BEFORE_MS)
    await broker!.stopProcess()
    outage = true
    const stoppedAt = Date.now()
    await sleep(OUTAGE_MS)
    outage = false
    await broker!.startProcess()
    const downMs = Date.now() - stoppedAt
    await sleep(AFTER_MS)
    run.sending = false
    await Promise.all(senders)
    http.destroy()
    const total = [...sent.values()].reduce((a, b) => a + b, 0)

    // Read the topic from the beginning until every webhook is there.
    const kafka = new Kafka({ clientId: "reliability-reader", brokers: [...broker!.brokers], logLevel: logLevel.NOTHING })
    const consumer = kafka.consumer({ groupId: `reliability-${Date.now()}` })
    const seen = new Set<string>()
    const perKey = new Map<string, Array<number>>()
    let repeated = 0
    await consumer.connect()
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ message }) => {
        const id = message.headers?.["ocs-record-id"]?.toString() ?? ""
        if (seen.has(id)) {
          repeated++
          return
        }
        seen.add(id)
        const row = JSON.parse(message.value!.toString("utf8")) as { source: string; body: string; tenant: string }
        if (row.source !== "webhook") return
        const seq = (JSON.parse(row.body) as { data: { seq: number } }).data.seq
        const list = perKey.get(message.key!.toString()) ?? []
        list.push(seq)
        perKey.set(message.key!.toString(), list)
      }
    })
    const caughtUpAfter = Date.now()
    const onTopic = () => [...perKey.values()].reduce((a, l) => a + l.length, 0)
    await eventually("the relay to put every webhook on the topic", async () => (onTopic() >= total ? true : undefined), 90_000, 250)
      .catch(() => undefined)
    const relayMs = Date.now() - caughtUpAfter
    await consumer.disconnect()

    let outOfOrder = 0
    for (const list of perKey.values()) for (let i = 1; i < list.length; i++) if (list[i]! <= list[i - 1]!) outOfOrder++
    // The read models (fed from the topic) end up with every product.
    const missing: Array<string> = []
    for (const t of tenants) {
      const expected = (sent.get(t.appId) ?? 0) + (simProducts.get(t.appId) ?? 0)
      const got = await eventually(`read model of ${t.appId}`, async () => {
        const { body } = await admin(url, `/admin/tenants/${t.appId}/${t.businessId}`)
        return body.counts.products === expected ? expected : undefined
      }, 60_000, 250).catch(async () => (await admin(url, `/admin/tenants/${t.appId}/${t.businessId}`)).body.counts.products as number)
      if (got !== expected) missing.push(`${t.appId}: ${got} of ${expected}`)
    }
    console.log(`[kafka] sent=${total} acknowledged=${total - failures.length} refused=${failures.length} during-outage=${duringOutage} (broker down ${downMs} ms); on topic=${onTopic()} lost=${total - onTopic()} repeated=${repeated} out-of-order=${outOfOrder}; relay caught up ${relayMs} ms after the reader started; read models short: ${missing.length}`)
    assert.deepStrictEqual(failures.slice(0, 5), [], "no webhook refused during the outage")
    assert.isAbove(duringOutage, 100, "webhooks kept arriving while the broker was down")
    assert.strictEqual(onTopic(), total, "every acknowledged webhook reached the topic once")
    assert.strictEqual(outOfOrder, 0, "per business, the topic keeps the sending order")
    for (const t of tenants) {
      const list = perKey.get(Ids.tenantKey(t)) ?? []
      assert.deepStrictEqual(list, Array.from({ length: sent.get(t.appId) ?? 0 }, (_, i) => i), `sequence of ${t.appId}`)
    }
    assert.deepStrictEqual(missing, [], "the read models hold every product")
    assert.isTrue(server.alive())
  })
})
