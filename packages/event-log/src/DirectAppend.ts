/**
 * Appends from code outside any fiber: a `node:http` request listener on the webhook hot path
 * appends and answers in plain callbacks, without running an effect per request.
 *
 * A capability of the SQLite log (and of the Kafka log, through its SQLite outbox): their
 * layers provide it beside `EventLog`. A log that wraps another one and changes `append` (a
 * test putting failures in front of the real log, a read-only view) builds it with
 * `fromAppend` instead, so no log has to carry it.
 */
import { Context, Effect, type Exit, Layer } from "effect"
import { EventLog, type EventLogService } from "./EventLog.ts"
import type { EventLogError } from "./EventLogError.ts"
import type { AppendResult, NewRecord } from "./LogRecord.ts"

export interface DirectAppendService {
  /**
   * `EventLog.append` with a callback: the same semantics and guarantees (durable before
   * `onExit` succeeds), the outcome handed to `onExit` once known. Never throws.
   */
  readonly append: (
    batch: ReadonlyArray<NewRecord>,
    onExit: (exit: Exit.Exit<ReadonlyArray<AppendResult>, EventLogError>) => void
  ) => void
}

export class DirectAppend extends Context.Service<DirectAppend, DirectAppendService>()("@ocs/event-log/DirectAppend") {
  /** `DirectAppend` running the `EventLog` in context's `append` (see `fromAppend`). */
  static readonly layerFromEventLog: Layer.Layer<DirectAppend, never, EventLog> = Layer.effect(
    DirectAppend,
    Effect.map(EventLog, (log) => fromAppend(log.append))
  )
}

/**
 * A `DirectAppend` that runs the given `append` effect: for a log that wraps another one.
 * It costs a fiber per call, which the logs' own direct appends avoid.
 */
export const fromAppend = (append: EventLogService["append"]): DirectAppendService => ({
  append: (batch, onExit) => {
    Effect.runCallback(append(batch), { onExit })
  }
})
