/**
 * @ocs/transport: calls to the Open Commerce Service API inside its rate limits.
 */
export * as CommerceClient from "./CommerceClient.ts"
export * as RateLimiter from "./RateLimiter.ts"
export * as RateLimitStore from "./RateLimitStore.ts"
export * as TransportError from "./TransportError.ts"
export * as TransportEvents from "./TransportEvents.ts"
