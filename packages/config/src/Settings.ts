/**
 * Schemas every package's options section uses, so that a port, a duration or a count is
 * checked the same way everywhere.
 *
 * Durations: a setting a person writes names its unit in seconds (`intervalSeconds`,
 * `storeTimeoutSeconds`, `handoverSeconds`); a package converts once, where it builds its
 * service's options. Three keys older configurations use keep their names: `api.timeoutMs`,
 * `rateLimits.skewAllowanceMs`, `tracing.exportIntervalMillis`.
 */
import { Schema } from "effect"

export const Port = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 }))

/** A duration in seconds (or a rate) above 0. */
export const PositiveNumber = Schema.Finite.check(Schema.isGreaterThan(0))

/** A duration in seconds that may be 0 (`handoverSeconds: 0`: no wait). */
export const NonNegativeNumber = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))

export const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))

export const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** Seconds to milliseconds, keeping an absent setting absent (the owner's default then applies). */
export const millis = (seconds: number | undefined): number | undefined => seconds === undefined ? undefined : seconds * 1000
