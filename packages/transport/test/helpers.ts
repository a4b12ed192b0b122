import { NodeHttpClient } from "@effect/platform-node"
import { Layer } from "effect"
import type { Operation } from "@ocs/protocol"
import * as CommerceClient from "../src/CommerceClient.ts"
import * as RateLimiter from "../src/RateLimiter.ts"
import { RateLimitStore } from "../src/RateLimitStore.ts"
import * as TransportEvents from "../src/TransportEvents.ts"
import type { TransportEvent } from "../src/TransportEvents.ts"

export interface ClientLayerOptions {
  readonly posBaseUrl: string
  readonly vpageBaseUrl: string
  readonly overrides?: Readonly<Record<string, Operation.RateLimit>>
  readonly store?: Layer.Layer<RateLimitStore, unknown>
  readonly events?: Array<TransportEvent>
  readonly skewAllowanceMs?: number
  readonly safetyMargin?: number
  readonly client?: Partial<CommerceClient.ClientOptions>
}

/** The real client stack: undici keep-alive HTTP, the scheduler, a store, collected events. */
export const clientLayer = (o: ClientLayerOptions) => {
  const events = TransportEvents.TransportEvents.collect(o.events ?? [])
  const limiter = RateLimiter.RateLimiter.layer({
    overrides: o.overrides,
    skewAllowanceMs: o.skewAllowanceMs ?? 250,
    safetyMargin: o.safetyMargin ?? 1
  }).pipe(Layer.provide(o.store ?? RateLimitStore.layerMemory), Layer.provide(events))
  return CommerceClient.CommerceClient.layer({ posBaseUrl: o.posBaseUrl, vpageBaseUrl: o.vpageBaseUrl, backoffBaseMs: 20, ...o.client }).pipe(
    Layer.provideMerge(limiter),
    Layer.provideMerge(events),
    Layer.provide(NodeHttpClient.layerUndici)
  ) as Layer.Layer<CommerceClient.CommerceClient | RateLimiter.RateLimiter | TransportEvents.TransportEvents, never>
}
