/**
 * Which tenants this server pulls. On one machine: all of them. With the Kafka log, several
 * servers share ingestion (any of them takes any webhook: they all append to the same topic)
 * while each tenant's pulls are owned by one server at a time, so that one tenant's budget
 * is never spent by two processes.
 *
 * Ownership rides on a Kafka consumer group: the servers join group `<topic>-owners` on a
 * small topic of P partitions; a tenant belongs to partition hash(appId:businessId) mod P,
 * and a server owns the tenants of the partitions the group assigns to it. When a server
 * joins or dies, the group rebalances and the partitions move.
 *
 * A server that gains a tenant waits `handoverMs` (at least the longest rate window) before
 * pulling it: the previous owner may have spent that window's budget, and the new owner's
 * scheduler cannot know it.
 */
import { Context, Effect, Layer, Schema } from "effect"
import * as Crypto from "node:crypto"

export interface OwnershipService {
  /** True when this server may pull the tenant now. */
  readonly owns: (appId: string, businessId: string) => boolean
  /** Partitions owned, for the admin API and tests. */
  readonly describe: () => { readonly mode: "all" | "kafka"; readonly member?: string | undefined; readonly partitions?: ReadonlyArray<number> | undefined }
}

export class Ownership extends Context.Service<Ownership, OwnershipService>()("@ocs/sync-server/Ownership") {
  /** A single server owns every tenant. */
  static readonly layerAll: Layer.Layer<Ownership> = Layer.succeed(Ownership, Ownership.of({ owns: () => true, describe: () => ({ mode: "all" }) }))

  static readonly layerKafka = (options: KafkaOwnershipOptions): Layer.Layer<Ownership, OwnershipUnavailable> => Layer.effect(Ownership, makeKafka(options))
}

export class OwnershipUnavailable extends Schema.TaggedError<OwnershipUnavailable>()("OwnershipUnavailable", {
  message: Schema.String
}) {}

export interface KafkaOwnershipOptions {
  readonly brokers: ReadonlyArray<string>
  /** Name of the ownership topic and group (default derived from the event topic). */
  readonly topic: string
  readonly partitions?: number | undefined
  readonly handoverMs: number
  readonly clientId?: string | undefined
  readonly sessionTimeoutMs?: number | undefined
}

/** The partition of a tenant: stable across servers and restarts. */
export const partitionOf = (appId: string, businessId: string, partitions: number): number =>
  Crypto.createHash("sha256").update(`${appId}:${businessId}`).digest().readUInt32BE(0) % partitions

const makeKafka = (options: KafkaOwnershipOptions) =>
  Effect.gen(function*() {
    const partitions = options.partitions ?? 32
    // kafkajs is loaded by the Kafka mode only: a server on the SQLite log never holds it.
    const { Kafka, logLevel } = yield* Effect.promise(() => import("kafkajs"))
    const kafka = new Kafka({ brokers: [...options.brokers], clientId: options.clientId ?? "ocs-sync-owner", logLevel: logLevel.NOTHING })
    const admin = kafka.admin()
    yield* Effect.tryPromise({
      try: async () => {
        await admin.connect()
        const existing = await admin.listTopics()
        if (!existing.includes(options.topic)) {
          await admin.createTopics({ topics: [{ topic: options.topic, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true })
        }
        await admin.disconnect()
      },
      catch: (e) => new OwnershipUnavailable({ message: `cannot prepare the ownership topic ${options.topic}: ${String(e)}` })
    })
    // partition -> the time from which this server may pull its tenants
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
    return Ownership.of({
      owns: (appId, businessId) => {
        const since = owned.get(partitionOf(appId, businessId, partitions))
        return since !== undefined && Date.now() >= since
      },
      describe: () => ({ mode: "kafka", member, partitions: [...owned.keys()].sort((a, b) => a - b) })
    })
  })
