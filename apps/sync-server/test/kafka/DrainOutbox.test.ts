/**
 * Webhooks a Kafka-mode server acknowledged but could not relay (its topic gone) and then
 * the server killed: they wait in its outbox, `/metrics` and `/readyz` count them, and
 * `--drain-outbox` on its data folder relays exactly those to the topic and exits.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { kafkaBrokers, kafkaUnavailable, readTopic } from "@ocs/kafka-broker/testing"
import { Kafka, logLevel } from "kafkajs"
import * as ChildProcess from "node:child_process"
import * as Path from "node:path"
import { nodeEnv, nodeFlags } from "../../src/ops/nodeFlags.ts"
import { eventually, type Proc, serverBin, startServerProcess } from "../processes.ts"

const ADMIN_KEY = "drain-admin-key-00000001"
const TOPIC = `ocs-drain-${Date.now()}`
const APP = "7101"
const BUSINESS = "8101"
const TOKEN = "drain-verify-token"
const ENV = { OCS_ENCRYPTION_KEY: "69".repeat(32) }

const runDrain = (dir: string) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = ChildProcess.spawn(process.execPath, [...nodeFlags, serverBin, "--config", Path.join(dir, "ocs.json"), "--drain-outbox"], {
      env: { ...process.env, ...nodeEnv, ...ENV },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (c: Buffer) => (output += c.toString()))
    child.stderr.on("data", (c: Buffer) => (output += c.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })

describe.skipIf(kafkaUnavailable())("draining the outbox of a server that is gone", () => {
  const kafka = new Kafka({ brokers: [...kafkaBrokers()], logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  let server: { proc: Proc; url: string; dir: string }

  beforeAll(async () => {
    await admin.connect()
    server = await startServerProcess({
      server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
      dataDir: "data",
      eventLog: { mode: "kafka", kafka: { brokers: kafkaBrokers(), topic: TOPIC, partitions: 3 } },
      api: { posBaseUrl: "http://127.0.0.1:9/pos", vpageBaseUrl: "http://127.0.0.1:9/vpage" },
      sync: { resources: [], intervalSeconds: 3600, reconcileSeconds: 86_400, overlapSeconds: 0 },
      webhooks: { silenceAlertSeconds: 86_400 },
      tenants: [{ appId: APP, verifyTokens: [TOKEN], businesses: [{ businessId: BUSINESS, accessToken: "unused" }] }]
    }, ENV)
  }, 120_000)

  afterAll(async () => {
    await server?.proc.stop("SIGKILL")
    await admin.deleteTopics({ topics: [TOPIC] }).catch(() => undefined)
    await admin.disconnect()
  })

  const webhook = async (i: number) => {
    const body = JSON.stringify({ event: "productAdd", businessId: Number(BUSINESS), webhooksVerifyToken: TOKEN, data: { id: 5_000 + i, name: `drained ${i}`, price: i } })
    const r = await fetch(`${server.url}/webhooks/${APP}`, { method: "POST", headers: { "content-type": "application/json" }, body })
    await r.arrayBuffer()
    assert.strictEqual(r.status, 200)
  }
  const metric = async (name: string) => {
    const text = await (await fetch(`${server.url}/metrics`)).text()
    const line = text.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    return line === undefined ? undefined : Number(line.split(" ").pop())
  }

  it("counts the stranded webhooks, and the drain relays exactly them", async () => {
    for (let i = 0; i < 10; i++) await webhook(i)
    await eventually("the first ten relayed and the cursor saved", async () => ((await metric("ocs_outbox_unrelayed_records")) === 0 ? true : undefined), 30_000, 200)

    // The topic goes away: the relay cannot send, the webhooks are still acknowledged.
    await admin.deleteTopics({ topics: [TOPIC] })
    await eventually("the topic deleted", async () => (!(await admin.listTopics()).includes(TOPIC) ? true : undefined), 30_000, 200)
    for (let i = 10; i < 30; i++) await webhook(i)
    await eventually("20 records waiting in the outbox", async () => ((await metric("ocs_outbox_unrelayed_records")) === 20 ? true : undefined), 30_000, 200)
    const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { unrelayed?: { records: number } }
    assert.strictEqual(ready.unrelayed?.records, 20, "/readyz shows them too")

    // The server dies and does not come back; its topic is back (empty).
    await server.proc.stop("SIGKILL")
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic: TOPIC, numPartitions: 3, replicationFactor: 1 }] })

    const first = await runDrain(server.dir)
    assert.strictEqual(first.code, 0, first.output)
    assert.match(first.output, /relayed 20 record\(s\)/)

    // Exactly the twenty stranded webhooks are on the new topic, each once.
    const messages = await readTopic(kafkaBrokers(), TOPIC)
    assert.strictEqual(messages.length, 20)
    const ids = messages.map((m) => (JSON.parse((JSON.parse(m.value) as { body: string }).body) as { data: { id: number } }).data.id)
    assert.deepStrictEqual(ids.sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => 5_010 + i))

    // Again: nothing left.
    const second = await runDrain(server.dir)
    assert.strictEqual(second.code, 0, second.output)
    assert.match(second.output, /nothing to relay/)
  })
})
