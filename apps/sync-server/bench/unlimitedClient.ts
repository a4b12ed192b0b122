/**
 * The API client the engine benches sync with: against the simulator at `simUrl`, product/list
 * allowed a million calls a second (the bench measures the engine, not the rate limits), locks
 * in memory.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { Layer } from "effect"
import { CommerceClient, RateLimiter, RateLimitStore, TransportEvents } from "@ocs/transport"

export const unlimitedClient = (simUrl: string) =>
  CommerceClient.CommerceClient.layer({ posBaseUrl: `${simUrl}/pos`, vpageBaseUrl: `${simUrl}/vpage` }).pipe(
    Layer.provide(RateLimiter.RateLimiter.layer({ overrides: { "/v3.0/product/list": { requests: 1_000_000, windowSeconds: 1 } } }).pipe(
      Layer.provide(RateLimitStore.RateLimitStore.layerMemory),
      Layer.provide(TransportEvents.TransportEvents.layerLog)
    )),
    Layer.provide(TransportEvents.TransportEvents.layerLog),
    Layer.provide(NodeHttpClient.layerUndici)
  )
