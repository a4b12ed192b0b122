/**
 * Work shared out between processes by a Kafka consumer group (docs/architecture.md §4.19):
 * every process joins group `<topic>` on a small topic of P partitions (created when absent),
 * and owns the partitions the group assigns to it; when a process joins or dies, the group
 * rebalances and the partitions move. A partition gained waits `handoverMs` before `owns`
 * says yes: the previous owner may still be finishing what it started. Whatever is shared
 * (the sync server's tenants) maps to a partition with `partitionOf`.
 *
 * kafkajs is loaded only when one is made.
 */
import { Effect, Schedule, Schema, type Scope } from "effect"
import * as Crypto from "node:crypto"

export class OwnershipUnavailable extends Schema.TaggedError<OwnershipUnavailable>()("OwnershipUnavailable", {
  message: Schema.String
}) {}

export interface Options {
  readonly brokers: ReadonlyArray<string>
  /** Name of the ownership topic and group. */
  readonly topic: string
  readonly partitions?: number | undefined
  /**
   * Another topic whose partitions are the work (a copy shared partition by partition): the
   * group gets at least as many partitions as that topic has on the broker, whatever
   * `partitions` says, so none of them is left without an owner.
   */
  readonly partitionsOf?: string | undefined
  readonly handoverMs: number
  readonly clientId?: string | undefined
  readonly sessionTimeoutMs?: number | undefined
}

export interface PartitionOwnership {
  readonly partitions: number
  /** True when this process may work on the partition now. */
  readonly owns: (partition: number) => boolean
  readonly describe: () => { readonly member: string | undefined; readonly partitions: ReadonlyArray<number> }
}

/** The partition of a key: stable across processes and restarts. */
export const partitionOf = (key: string, partitions: number): number =>
  Crypto.createHash("sha256").update(key).digest().readUInt32BE(0) % partitions

/** Joins the group; leaves it when the scope closes. */
export const make = (options: Options): Effect.Effect<PartitionOwnership, OwnershipUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    const { Kafka, logLevel } = yield* Effect.promise(() => import("kafkajs"))
    const kafka = new Kafka({ brokers: [...options.brokers], clientId: options.clientId ?? "ocs-sync-owner", logLevel: logLevel.NOTHING })
    const admin = kafka.admin()
    // A busy broker, or servers starting together, can answer that it does not host the new
    // topic's partitions yet; that settles in moments, so the step is retried for about 11 s
    // (as CompactedTopic does) before the start fails.
    const partitions = yield* Effect.tryPromise({
      try: async () => {
        await admin.connect()
        try {
          const wanted = Math.max(
            options.partitions ?? 32,
            options.partitionsOf === undefined ? 0 : (await admin.fetchTopicOffsets(options.partitionsOf)).length
          )
          const existing = await admin.listTopics()
          if (!existing.includes(options.topic)) {
            await admin.createTopics({ topics: [{ topic: options.topic, numPartitions: wanted, replicationFactor: 1 }], waitForLeaders: true })
          } else if ((await admin.fetchTopicOffsets(options.topic)).length < wanted) {
            // Made earlier with fewer partitions: the missing ones would have no owner.
            await admin.createPartitions({ topicPartitions: [{ topic: options.topic, count: wanted }] })
          }
          await admin.fetchTopicOffsets(options.topic)
          return wanted
        } finally {
          await admin.disconnect()
        }
      },
      catch: (e) => new OwnershipUnavailable({ message: `cannot prepare the ownership topic ${options.topic}: ${String(e)}` })
    }).pipe(Effect.retry({ schedule: Schedule.exponential("100 millis", 1.5), times: 10 }))
    // partition -> the time from which this process may work on it
    const owned = new Map<number, number>()
    let member: string | undefined
    const consumer = kafka.consumer({ groupId: options.topic, sessionTimeout: options.sessionTimeoutMs ?? 10_000, heartbeatInterval: 1_000 })
    consumer.on(consumer.events.REBALANCING, () => {
      // Eager rebalance: everything is revoked until the new assignment arrives.
      for (const p of owned.keys()) owned.set(p, Infinity)
    })
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      member = event.payload.memberId
      const assigned = new Set(event.payload.memberAssignment[options.topic] ?? [])
      const now = Date.now()
      for (const p of owned.keys()) if (!assigned.has(p)) owned.delete(p)
      for (const p of assigned) {
        const before = owned.get(p)
        // Kept partitions resume at once; new ones wait out the previous owner's window.
        owned.set(p, before === undefined ? now + options.handoverMs : Math.min(before === Infinity ? now : before, now))
      }
    })
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          await consumer.connect()
          await consumer.subscribe({ topic: options.topic, fromBeginning: false })
          await consumer.run({ eachMessage: async () => {} })
        },
        catch: (e) => new OwnershipUnavailable({ message: `cannot join the ownership group ${options.topic}: ${String(e)}` })
      }),
      () => Effect.promise(() => consumer.disconnect().catch(() => undefined))
    )
    return {
      partitions,
      owns: (partition) => {
        const since = owned.get(partition)
        return since !== undefined && Date.now() >= since
      },
      describe: () => ({ member, partitions: [...owned.keys()].sort((a, b) => a - b) })
    }
  })
