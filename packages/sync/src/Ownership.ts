/**
 * Which tenants this server pulls. On one machine: all of them. With the Kafka log, several
 * servers share ingestion (any of them takes any webhook: they all append to the same topic)
 * while each tenant's pulls are owned by one server at a time, so that one tenant's budget
 * is never spent by two processes (docs/architecture.md §4.19).
 *
 * In Kafka mode ownership rides on a consumer group (`@ocs/event-log`'s PartitionOwnership):
 * a tenant belongs to partition hash(appId:businessId) mod P, and a server owns the tenants of
 * the partitions the group assigns to it. A server that gains a partition waits `handoverMs`
 * (at least the longest rate window) before pulling its tenants: the previous owner may have
 * spent that window's budget, and the new owner's scheduler cannot know it.
 */
import { Context, Effect, Layer } from "effect"
import { PartitionOwnership } from "@ocs/event-log"
import { Ids } from "@ocs/protocol"

export interface OwnershipService {
  /** True when this server may pull the tenant now. */
  readonly owns: (appId: string, businessId: string) => boolean
  /** Partitions owned, for the admin API and tests. */
  readonly describe: () => { readonly mode: "all" | "kafka"; readonly member?: string | undefined; readonly partitions?: ReadonlyArray<number> | undefined }
}

export class Ownership extends Context.Service<Ownership, OwnershipService>()("@ocs/sync/Ownership") {
  /** A single server owns every tenant. */
  static readonly layerAll: Layer.Layer<Ownership> = Layer.succeed(Ownership, Ownership.of({ owns: () => true, describe: () => ({ mode: "all" }) }))

  /** Tenants shared out by a Kafka consumer group. */
  static readonly layerKafka = (options: PartitionOwnership.Options): Layer.Layer<Ownership, PartitionOwnership.OwnershipUnavailable> =>
    Layer.effect(
      Ownership,
      Effect.map(PartitionOwnership.make(options), (group) =>
        Ownership.of({
          owns: (appId, businessId) => group.owns(tenantPartition(appId, businessId, group.partitions)),
          describe: () => ({ mode: "kafka", ...group.describe() })
        }))
    )
}

/** The partition of a tenant: stable across servers and restarts. */
export const tenantPartition = (appId: string, businessId: string, partitions: number): number =>
  PartitionOwnership.partitionOf(Ids.tenantKey({ appId, businessId }), partitions)
