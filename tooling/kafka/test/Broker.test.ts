/**
 * Starts a real broker and round-trips keyed messages through it, across a stop and start of
 * the JVM. Outside CI it skips when this machine cannot run a broker (no Java, no Maven, no
 * download); with CI=true it fails instead.
 */
import { existsSync } from "node:fs"
import { Kafka, logLevel, type Admin, type KafkaMessage } from "kafkajs"
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest"
import { isEnvironmentError, type KafkaBroker, startBroker } from "../src/Broker.ts"

const topic = "broker-test-orders"
const keys = ["k0", "k1", "k2", "k3", "k4", "k5"]
const perKey = 10

let broker: KafkaBroker | undefined
let skipReason = "the broker did not start"

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const requireBroker = (ctx: TestContext): KafkaBroker => {
  if (!broker) ctx.skip(skipReason)
  return broker as KafkaBroker
}

const client = (b: KafkaBroker) =>
  new Kafka({ clientId: "broker-test", brokers: [...b.brokers], logLevel: logLevel.NOTHING, retry: { retries: 8 } })

const withAdmin = async <A>(b: KafkaBroker, f: (admin: Admin) => Promise<A>): Promise<A> => {
  const admin = client(b).admin()
  await admin.connect()
  try {
    return await f(admin)
  } finally {
    await admin.disconnect()
  }
}

interface Received {
  readonly key: string
  readonly value: string
  readonly partition: number
}

/** Consumes `topic` from the beginning with a fresh group until `count` messages arrived. */
const consumeAll = async (b: KafkaBroker, group: string, count: number): Promise<Array<Received>> => {
  const consumer = client(b).consumer({ groupId: group })
  const received: Array<Received> = []
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${received.length} of ${count} messages within 30 s`)), 30_000)
      consumer
        .run({
          eachMessage: async ({ partition, message }: { partition: number; message: KafkaMessage }) => {
            received.push({ key: message.key?.toString() ?? "", value: message.value?.toString() ?? "", partition })
            if (received.length >= count) {
              clearTimeout(timer)
              resolve()
            }
          }
        })
        .catch(reject)
    })
  } finally {
    await consumer.disconnect()
  }
  return received
}

/** Each key's messages arrive in the order produced, all from one partition. */
const expectInOrderPerKey = (received: ReadonlyArray<Received>, upTo: number) => {
  for (const key of keys) {
    const mine = received.filter((m) => m.key === key)
    expect(mine.map((m) => m.value)).toEqual(Array.from({ length: upTo }, (_, i) => `${key}-${i}`))
    expect(new Set(mine.map((m) => m.partition)).size).toBe(1)
  }
}

const produce = async (b: KafkaBroker, from: number, to: number) => {
  const producer = client(b).producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  try {
    for (let i = from; i < to; i++) {
      await producer.send({ topic, acks: -1, messages: keys.map((key) => ({ key, value: `${key}-${i}` })) })
    }
  } finally {
    await producer.disconnect()
  }
}

describe("startBroker", () => {
  beforeAll(async () => {
    try {
      broker = await startBroker({ startTimeoutMs: 60_000 })
    } catch (error) {
      if (process.env.CI === "true" || !isEnvironmentError(error)) throw error
      skipReason = `no Kafka broker on this machine: ${error.message.split("\n")[0]}`
      console.warn(`[kafka-broker] SKIPPING: ${error.message}`)
    }
  }, 600_000) // the first run fetches the jars with Maven

  afterAll(async () => {
    await broker?.close()
  })

  it("creates a 3-partition topic and round-trips keyed messages in order", async (ctx) => {
    const b = requireBroker(ctx)
    expect(b.brokers).toEqual([`127.0.0.1:${b.port}`])
    const created = await withAdmin(b, (admin) =>
      admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3, replicationFactor: 1 }] })
    )
    expect(created).toBe(true)
    await produce(b, 0, perKey)
    const received = await consumeAll(b, "broker-test-1", keys.length * perKey)
    expect(received).toHaveLength(keys.length * perKey)
    expectInOrderPerKey(received, perKey)
  })

  it("keeps topics and messages across stopProcess/startProcess on the same port", async (ctx) => {
    const b = requireBroker(ctx)
    const firstPid = b.pid
    expect(firstPid).toBeTypeOf("number")
    await b.stopProcess()
    expect(b.running).toBe(false)
    expect(b.pid).toBeUndefined()
    expect(alive(firstPid as number)).toBe(false)
    expect(existsSync(b.dataDir)).toBe(true)

    await b.startProcess()
    expect(b.running).toBe(true)
    expect(b.pid).not.toBe(firstPid)
    expect(b.brokers).toEqual([`127.0.0.1:${b.port}`])

    const metadata = await withAdmin(b, (admin) => admin.fetchTopicMetadata({ topics: [topic] }))
    expect(metadata.topics[0]?.partitions).toHaveLength(3)
    await produce(b, perKey, perKey + 2)
    const received = await consumeAll(b, "broker-test-2", keys.length * (perKey + 2))
    expectInOrderPerKey(received, perKey + 2)
  })

  it("close() stops the JVM and removes the data dir", async (ctx) => {
    const b = requireBroker(ctx)
    const pid = b.pid as number
    const dataDir = b.dataDir
    expect(alive(pid)).toBe(true)
    await b.close()
    expect(alive(pid)).toBe(false)
    expect(existsSync(dataDir)).toBe(false)
    await b.close() // idempotent
    broker = undefined
  })
})
