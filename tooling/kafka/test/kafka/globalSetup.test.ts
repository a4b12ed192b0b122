/**
 * Runs in the root `kafka` vitest project, whose globalSetup (../../src/globalSetup.ts) starts
 * one shared broker; shows how suites in packages/<name>/test/kafka/ use it.
 */
import { Kafka, logLevel } from "kafkajs"
import { describe, expect, it } from "vitest"
import { kafkaBrokers, kafkaBrokersOrSkip, kafkaUnavailable } from "../../src/testing.ts"

describe.skipIf(kafkaUnavailable())("the shared broker of the kafka project", () => {
  it("answers an admin client", async () => {
    const brokers = kafkaBrokers()
    expect(brokers[0]).toMatch(/^127\.0\.0\.1:\d+$/)
    const admin = new Kafka({ clientId: "global-setup-test", brokers: [...brokers], logLevel: logLevel.NOTHING }).admin()
    await admin.connect()
    try {
      const cluster = await admin.describeCluster()
      expect(cluster.brokers).toHaveLength(1)
    } finally {
      await admin.disconnect()
    }
  })

  it("kafkaBrokersOrSkip returns the same servers", (ctx) => {
    expect(kafkaBrokersOrSkip(ctx)).toEqual(kafkaBrokers())
  })
})
