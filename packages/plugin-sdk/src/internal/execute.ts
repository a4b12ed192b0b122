/**
 * One event through a handler: per-attempt timeout, defects and failures caught, retried with
 * exponential backoff. Shared by the runtime, re-drive, dry runs and the testing helpers.
 */
import { Cause, Effect, Exit, Schedule } from "effect"
import type { DomainEvent } from "@ocs/protocol"
import type { PluginContext } from "../Capabilities.ts"
import type { AnyPlugin } from "../Plugin.ts"
import { HandlerFailed } from "../PluginError.ts"

export interface Policy {
  readonly maxAttempts: number
  readonly baseDelayMillis: number
  readonly maxDelayMillis: number
  readonly timeoutMillis: number
}

export const policyOf = (plugin: AnyPlugin, defaults: { readonly [K in keyof Policy]?: number | undefined }): Policy => ({
  maxAttempts: Math.max(1, plugin.retry?.maxAttempts ?? defaults.maxAttempts ?? 5),
  baseDelayMillis: plugin.retry?.baseDelayMillis ?? defaults.baseDelayMillis ?? 200,
  maxDelayMillis: plugin.retry?.maxDelayMillis ?? defaults.maxDelayMillis ?? 30_000,
  timeoutMillis: plugin.timeoutMillis ?? defaults.timeoutMillis ?? 30_000
})

export type Outcome =
  | { readonly _tag: "Handled"; readonly attempts: number }
  | { readonly _tag: "Failed"; readonly attempts: number; readonly error: HandlerFailed }

const describe = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  if (error instanceof Error) return error.message.length > 0 ? `${error.name}: ${error.message}` : Cause.pretty(cause)
  if (typeof error === "object" && error !== null && "message" in error) return String((error as { message: unknown }).message)
  return Cause.pretty(cause)
}

/** One attempt: the handler's failure, defect or timeout becomes a `HandlerFailed`. */
export const attempt = (
  plugin: AnyPlugin,
  event: DomainEvent.DomainEvent,
  context: PluginContext<unknown>,
  timeoutMillis: number
): Effect.Effect<void, HandlerFailed> =>
  Effect.suspend(() => plugin.handle(event, context)).pipe(
    Effect.timeout(timeoutMillis),
    Effect.exit,
    Effect.flatMap((exit) => {
      if (Exit.isSuccess(exit)) return Effect.void
      // Our own fiber being interrupted (shutdown) is not the plugin's failure: stop here and
      // leave the event to be redelivered.
      if (Cause.hasInterruptsOnly(exit.cause)) return Effect.failCause(exit.cause as Cause.Cause<never>)
      const timedOut = Cause.squash(exit.cause) instanceof Cause.TimeoutError
      return Effect.fail(
        new HandlerFailed({
          plugin: plugin.name,
          eventId: event.id,
          attempt: context.attempt,
          timedOut,
          message: timedOut ? `no result within ${timeoutMillis} ms` : describe(exit.cause)
        })
      )
    })
  )

/**
 * Attempts until success or `maxAttempts`, waiting base * 2^(n-1), capped at the maximum,
 * before attempt n+1 (no jitter: a plugin handles its events one at a time, so its retries
 * cannot pile up with each other, and the delays stay the ones `RetryPolicy` documents).
 */
export const execute = (
  plugin: AnyPlugin,
  event: DomainEvent.DomainEvent,
  contextFor: (attempt: number) => PluginContext<unknown>,
  policy: Policy,
  onFailure: (error: HandlerFailed) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<Outcome> =>
  Effect.suspend(() => {
    let attempts = 0
    const once = Effect.suspend(() => attempt(plugin, event, contextFor(++attempts), policy.timeoutMillis)).pipe(
      Effect.tapError(onFailure)
    )
    const backoff = Schedule.min([Schedule.exponential(policy.baseDelayMillis), Schedule.spaced(policy.maxDelayMillis)]).pipe(
      Schedule.upTo({ times: policy.maxAttempts - 1 })
    )
    return once.pipe(
      Effect.retry(backoff),
      Effect.match({
        onSuccess: (): Outcome => ({ _tag: "Handled", attempts }),
        onFailure: (error): Outcome => ({ _tag: "Failed", attempts, error })
      })
    )
  })
