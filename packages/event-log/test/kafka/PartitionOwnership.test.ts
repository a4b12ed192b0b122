/**
 * PartitionOwnership against a real broker (project `kafka`): a group whose work is another
 * topic's partitions (`partitionsOf`, the shared PostgreSQL copy) gives every one of them an
 * owner, even when that topic was made with more partitions than configured, and an ownership
 * topic made earlier with fewer partitions is grown, not left with partitions nobody owns.
 */
import { assert, describe, it } from "@effect/vitest"
import { brokersOfFile } from "@ocs/kafka-broker/testing"
import { PartitionOwnership } from "@ocs/event-log"
import { Effect } from "effect"
import { Kafka, logLevel } from "kafkajs"

const brokers = brokersOfFile()

describe("PartitionOwnership", () => {
  it.live("owns one partition per partition of the topic it shares, growing an ownership topic made smaller", () =>
    Effect.gen(function*() {
      const stamp = `${process.pid}-${Date.now()}`
      const events = `ownership-events-${stamp}`
      const group = `${events}-copy`
      const admin = new Kafka({ brokers: [...brokers()], logLevel: logLevel.NOTHING }).admin()
      yield* Effect.acquireRelease(Effect.promise(() => admin.connect()), () => Effect.promise(() => admin.disconnect()))
      // The work topic has 5 partitions; the configuration says 3, and the group's topic exists with 2.
      yield* Effect.promise(() =>
        admin.createTopics({
          waitForLeaders: true,
          topics: [{ topic: events, numPartitions: 5, replicationFactor: 1 }, { topic: group, numPartitions: 2, replicationFactor: 1 }]
        })
      )
      const owner = yield* PartitionOwnership.make({ brokers: brokers(), topic: group, partitions: 3, partitionsOf: events, handoverMs: 0 })
      assert.strictEqual(owner.partitions, 5)
      assert.strictEqual((yield* Effect.promise(() => admin.fetchTopicOffsets(group))).length, 5)
      // The only member owns all five once the group has assigned them.
      const all = [0, 1, 2, 3, 4]
      for (let i = 0; i < 300 && !all.every(owner.owns); i++) yield* Effect.sleep(100)
      assert.deepStrictEqual(all.filter(owner.owns), all)
    }).pipe(Effect.scoped), 60_000)
})
