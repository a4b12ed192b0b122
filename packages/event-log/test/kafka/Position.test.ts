/**
 * The port's position reads in Kafka mode: `head` is the outbox's, `relayBacklog` counts what
 * the broker has not acknowledged (down to none once relayed), `lag` of a topic checkpoint is
 * unknown. Runs in the vitest project `kafka` (shared broker from its globalSetup).
 */
import { assert, describe, it } from "@effect/vitest"
import { kafkaBrokers, kafkaUnavailable } from "@ocs/kafka-broker/testing"
import { EventLog, KafkaEventLog } from "@ocs/event-log"
import { Effect, Option, Schedule, Stream } from "effect"
import * as NodePath from "node:path"
import { tempDir, webhook } from "../helpers.ts"

describe.skipIf(kafkaUnavailable())("KafkaEventLog position", () => {
  it.live("head of the outbox, a relay backlog that empties, no lag for topic positions", () =>
    Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      assert.strictEqual(yield* log.head(), 0)
      const appended = yield* log.append([webhook("1", `{"n":1}`), webhook("2", `{"n":2}`), webhook("1", `{"n":3}`)])
      assert.strictEqual(yield* log.head(), appended[2]!.offset)
      const first = yield* log.relayBacklog
      assert.isTrue(Option.isSome(first), "Kafka mode has a relay backlog")
      assert.isAtMost(Option.getOrThrow(first).records, 3)
      // The relay sends in the background: poll until the broker acknowledged everything.
      const emptied = yield* log.relayBacklog.pipe(
        Effect.flatMap((b) => Option.getOrThrow(b).records === 0 ? Effect.succeed(true) : Effect.fail("not yet")),
        Effect.retry({ times: 300, schedule: Schedule.spaced(50) }),
        Effect.orElseSucceed(() => false)
      )
      assert.isTrue(emptied)
      const delivered = yield* log.subscribe("position-test", { tenant: "all" }).pipe(Stream.take(3), Stream.runCollect)
      assert.deepStrictEqual(yield* log.lag(delivered[2]!.checkpoint), Option.none())
    }).pipe(Effect.provide(KafkaEventLog.layer({
      brokers: kafkaBrokers(),
      topic: `event-log-position-${process.pid}-${Date.now()}`,
      partitions: 2,
      outboxFilename: NodePath.join(tempDir(), "outbox.db"),
      clientId: "event-log-position-test"
    }))), 120_000)
})
