/**
 * Audit events of the transport: locks taken and released, warnings received, retries. The
 * engine appends them to its event log (source "system"); by default they are logged.
 */
import { Context, Effect, Layer } from "effect"
import type { Warning } from "@ocs/protocol"

export interface Where {
  readonly appId: string
  readonly businessId: string
  readonly operation: string
  /** The budget key: appId:businessId:family:path. */
  readonly key: string
}

export type TransportEvent =
  | (Where & {
    readonly _tag: "LockTaken"
    readonly until: number
    readonly lockedSeconds: number | undefined
    readonly unlockedAt: number | undefined
    readonly receivedAt: number
  })
  | (Where & { readonly _tag: "LockReleased"; readonly at: number })
  | (Where & { readonly _tag: "WarningReceived"; readonly warnings: ReadonlyArray<Warning.Warning> })
  | (Where & { readonly _tag: "RetryScheduled"; readonly attempt: number; readonly reason: string; readonly delayMs: number })

export class TransportEvents extends Context.Service<TransportEvents, {
  readonly emit: (event: TransportEvent) => Effect.Effect<void>
}>()("@ocs/transport/TransportEvents") {
  /** Logs each event (structured). */
  static readonly layerLog: Layer.Layer<TransportEvents> = Layer.succeed(
    TransportEvents,
    TransportEvents.of({
      emit: (event) =>
        (event._tag === "WarningReceived" || event._tag === "LockTaken" ? Effect.logWarning : Effect.logInfo)(
          `transport: ${event._tag}`
        ).pipe(Effect.annotateLogs({ event: JSON.stringify(event) }))
    })
  )

  /** Collects events in memory (tests, dry runs). */
  static readonly collect = (into: Array<TransportEvent>): Layer.Layer<TransportEvents> =>
    Layer.succeed(TransportEvents, TransportEvents.of({ emit: (event) => Effect.sync(() => void into.push(event)) }))
}
