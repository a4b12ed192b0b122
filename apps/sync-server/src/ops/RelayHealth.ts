/**
 * Kafka mode: the event-log relay's health as the server shows it. The relay backs off and
 * retries inside itself while the broker refuses it (the outbox keeps every append meanwhile),
 * so it never fails to its supervisor; its own status says when it has kept failing past
 * `eventLog.kafka.relayDownAfterSeconds`. Then `ocs_loop_up{loop="event-log-relay"}` is 0 and
 * `/readyz` answers 503 with the problem below (kinds and counts only: /readyz needs no key).
 */
import { Clock, Effect } from "effect"
import type { KafkaEventLog } from "@ocs/event-log"
import type { LoopProblem } from "@ocs/observability/LoopHealth"

/** The relay's problem, or undefined while its requests are acknowledged (or fail only briefly). */
export const problem = (status: KafkaEventLog.RelayStatus, now: number): LoopProblem | undefined =>
  status.up || status.failingSince === null
    ? undefined
    : {
      problem: `Kafka has not acknowledged a relay request for ${Math.round((now - status.failingSince) / 1000)} s ` +
        `(${status.failures} failed attempts, last: ${status.lastError ?? "no answer"}); appends wait in the outbox`,
      since: status.failingSince
    }

/** The check `LoopHealth.watch` runs for the loop `event-log-relay`. */
export const check = (relay: KafkaEventLog.RelayProgressService): Effect.Effect<LoopProblem | undefined> =>
  Effect.gen(function*() {
    const status = yield* relay.status
    return problem(status, yield* Clock.currentTimeMillis)
  })
