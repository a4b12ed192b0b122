/**
 * Helpers for test files of a vitest project whose globalSetup is
 * `tooling/kafka/src/globalSetup.ts`:
 *
 *   import { describe, it } from "vitest"
 *   import { kafkaBrokers, kafkaUnavailable } from "@ocs/kafka-broker/testing"
 *
 *   describe.skipIf(kafkaUnavailable())("orders topic", () => {
 *     it("round-trips", async () => { const kafka = new Kafka({ brokers: [...kafkaBrokers()] }) ... })
 *   })
 *
 * Under CI=true globalSetup fails the run instead of providing "", so nothing skips there.
 */
import { afterAll, beforeAll, inject, type TestContext } from "vitest"
import { Kafka, logLevel } from "kafkajs"
import { type KafkaBroker, startBroker } from "./Broker.ts"
import { kafkaBrokersKey } from "./context.ts"

const provided = (): string => {
  const value = inject(kafkaBrokersKey)
  if (typeof value !== "string") {
    throw new Error(
      "kafkaBrokers was not provided: add tooling/kafka/src/globalSetup.ts to this vitest project's `globalSetup`"
    )
  }
  return value
}

/** True when no broker is available (outside CI, without Java or Maven): skip the suite. */
export const kafkaUnavailable = (): boolean => provided() === ""

/** The shared broker's bootstrap servers; empty when kafkaUnavailable(). */
export const kafkaBrokers = (): ReadonlyArray<string> => {
  const value = provided()
  return value === "" ? [] : value.split(",")
}

/** The bootstrap servers, or a skip of the current test when there is no broker (outside CI). */
export const kafkaBrokersOrSkip = (context: Pick<TestContext, "skip">): ReadonlyArray<string> => {
  const brokers = kafkaBrokers()
  if (brokers.length === 0) context.skip("no Kafka broker (see the kafka-broker warning above)")
  return brokers
}

/**
 * The brokers of a test file that runs with or without the `kafka` project's globalSetup: the
 * shared broker when one is provided, else the file's own, started before its tests and closed
 * after them. Call it at the top of the file; read the brokers inside hooks and tests.
 */
export const brokersOfFile = (): (() => ReadonlyArray<string>) => {
  let brokers: ReadonlyArray<string> = []
  let own: KafkaBroker | undefined
  beforeAll(async () => {
    const value: unknown = inject(kafkaBrokersKey)
    if (typeof value === "string" && value !== "") {
      brokers = value.split(",")
    } else {
      own = await startBroker()
      brokers = own.brokers
    }
  }, 180_000)
  afterAll(async () => {
    await own?.close()
  })
  return () => brokers
}

/** A message of a topic as a test reads it back: key and value as text. */
export interface TopicMessage {
  readonly key: string
  readonly value: string
}

let readers = 0

/**
 * The messages of `topic` from the beginning of every partition: the first `n`, or when `n` is
 * not given every message the topic holds now. Partitions interleave in no fixed order.
 */
export const readTopic = async (brokers: ReadonlyArray<string>, topic: string, n?: number): Promise<ReadonlyArray<TopicMessage>> => {
  const kafka = new Kafka({ brokers: [...brokers], logLevel: logLevel.NOTHING })
  let wanted = n
  if (wanted === undefined) {
    const admin = kafka.admin()
    await admin.connect()
    try {
      wanted = (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0)
    } finally {
      await admin.disconnect()
    }
  }
  const messages: Array<TopicMessage> = []
  if (wanted === 0) return messages
  const consumer = kafka.consumer({ groupId: `read-${topic}-${process.pid}-${readers++}` })
  await consumer.connect()
  try {
    await consumer.subscribe({ topic, fromBeginning: true })
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          messages.push({ key: message.key?.toString("utf8") ?? "", value: message.value?.toString("utf8") ?? "" })
          if (messages.length >= wanted) resolve()
        }
      })
    })
  } finally {
    await consumer.disconnect()
  }
  return messages.slice(0, wanted)
}
