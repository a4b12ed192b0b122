/**
 * What the Kafka benches share: their command line (`--quick`, `--brokers host:port`), the
 * broker (the one given, else one of their own, closed by `close`), and how many messages a
 * topic holds.
 */
import { type KafkaBroker, startBroker } from "@ocs/kafka-broker"
import { Kafka, logLevel } from "kafkajs"
import { parseArgs } from "node:util"

export const kafkaBench = async () => {
  const { values } = parseArgs({ options: { quick: { type: "boolean", default: false }, brokers: { type: "string" } } })
  let own: KafkaBroker | undefined
  const brokers: Array<string> = values.brokers?.split(",") ?? [...(own = await startBroker()).brokers]
  /** The messages of every partition of `topic`. */
  const topicCount = async (topic: string) => {
    const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin()
    await admin.connect()
    try {
      return (await admin.fetchTopicOffsets(topic)).reduce((s, o) => s + Number(o.high), 0)
    } finally {
      await admin.disconnect()
    }
  }
  return { quick: values.quick, brokers, topicCount, close: async () => await own?.close() }
}
