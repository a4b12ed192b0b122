/**
 * The broker the `kafka` project starts keeps Kafka's defaults for every setting that decides
 * what a client may send or what the broker keeps (sizes, retention), as a production cluster
 * does: a suite that passes here does not depend on a limit only the test broker has. Only the
 * single-node necessities (replication factors, internal topics' partitions) and the thread
 * counts differ (../../src/Properties.ts).
 */
import { Kafka, logLevel } from "kafkajs"
import { describe, expect, it } from "vitest"
import { kafkaBrokers, kafkaUnavailable } from "../../src/testing.ts"

/** Kafka 3.9's defaults (the broker's `configSource` says DEFAULT_CONFIG for each). */
const defaults: Readonly<Record<string, string>> = {
  "message.max.bytes": "1048588",
  "socket.request.max.bytes": "104857600",
  "replica.fetch.max.bytes": "1048576",
  "fetch.max.bytes": "57671680",
  "log.segment.bytes": "1073741824",
  "log.retention.hours": "168",
  "log.retention.bytes": "-1",
  "log.cleanup.policy": "delete",
  "compression.type": "producer"
}

const withAdmin = async <A>(f: (admin: ReturnType<Kafka["admin"]>) => Promise<A>): Promise<A> => {
  const admin = new Kafka({ clientId: "broker-defaults-test", brokers: [...kafkaBrokers()], logLevel: logLevel.NOTHING }).admin()
  await admin.connect()
  try {
    return await f(admin)
  } finally {
    await admin.disconnect()
  }
}

describe.skipIf(kafkaUnavailable())("the kafka project's broker", () => {
  it("runs with Kafka's default size and retention settings", async () => {
    const { ConfigResourceTypes } = await import("kafkajs")
    const entries = await withAdmin(async (admin) => {
      const { brokers } = await admin.describeCluster()
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: ConfigResourceTypes.BROKER, name: String(brokers[0]!.nodeId), configNames: Object.keys(defaults) }]
      })
      return described.resources[0]!.configEntries
    })
    const actual = Object.fromEntries(entries.map((e) => [e.configName, e.configValue]))
    expect(actual).toEqual(defaults)
  })

  it("gives a new topic the broker's record batch limit", async () => {
    const { ConfigResourceTypes } = await import("kafkajs")
    const topic = `broker-defaults-${process.pid}-${Date.now()}`
    const limit = await withAdmin(async (admin) => {
      await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] })
      try {
        const described = await admin.describeConfigs({
          includeSynonyms: false,
          resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ["max.message.bytes"] }]
        })
        return described.resources[0]!.configEntries[0]!.configValue
      } finally {
        await admin.deleteTopics({ topics: [topic] })
      }
    })
    expect(limit).toBe("1048588")
  })
})
