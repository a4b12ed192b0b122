/**
 * `ocs-sync-server --drain-outbox`: relays what a Kafka-mode server's outbox holds past its
 * relay cursor to the topic, then exits. For a server that will not come back (its machine
 * retired, its data folder moved elsewhere): the webhooks it acknowledged and the pages it
 * pulled are on its disk only until they are relayed (docs/architecture.md §4.21). The
 * outbox's origin id travels with the file, so records a dead server had already relayed are
 * dropped by every consumer as repeats, wherever the drain runs.
 *
 * Never while a server runs on the same data folder: that server's relay is doing this job.
 */
import { Data, Duration, Effect, Layer, Option } from "effect"
import * as Fs from "node:fs"
import { KafkaEventLog } from "@ocs/event-log"
import type { Config } from "../boot/Config.ts"
import * as ProjectionLag from "../ops/ProjectionLag.ts"
import { files } from "../http/Server.ts"

export class DrainError extends Data.TaggedError("DrainError")<{ readonly message: string }> {}

export interface DrainReport {
  readonly topic: string
  /** Records the outbox held past its relay cursor at the start. */
  readonly relayed: number
  readonly millis: number
}

export const drainOutbox = (config: Config, options: { readonly progressEvery?: Duration.Input } = {}) =>
  Effect.gen(function*() {
    if (config.eventLog.mode !== "kafka") {
      return yield* new DrainError({ message: "--drain-outbox relays a Kafka-mode outbox: this configuration's event log is SQLite (eventLog.mode)" })
    }
    const outbox = files(config.dataDir).outbox
    if (!Fs.existsSync(outbox)) return yield* new DrainError({ message: `no outbox at ${outbox}: check dataDir` })
    const topic = config.eventLog.kafka.topic
    const reader = yield* ProjectionLag.make({ logFilename: outbox, consumer: "read-models", relayTopic: topic })
    const backlog = Effect.flatMap(reader.relayBacklog, (b) =>
      Option.isSome(b) ? Effect.succeed(b.value.records) : Effect.fail(new DrainError({ message: `cannot read the relay cursor in ${outbox}` })))
    const started = Date.now()
    const before = yield* backlog
    if (before === 0) return { topic, relayed: 0, millis: 0 } satisfies DrainReport
    yield* Effect.logInfo(`outbox ${outbox}: ${before} record(s) not on ${topic} yet; relaying`)
    // The same relay a server runs (started by the layer, stopped with this scope, which saves
    // its cursor); it retries with backoff while the broker is away, so this waits, saying so.
    yield* Layer.build(KafkaEventLog.layer({
      brokers: config.eventLog.kafka.brokers,
      topic,
      partitions: config.eventLog.kafka.partitions,
      outboxFilename: outbox,
      clientId: "ocs-sync-server-drain"
    }))
    const progressMillis = Duration.toMillis(Duration.fromInputUnsafe(options.progressEvery ?? "10 seconds"))
    let said = Date.now()
    for (;;) {
      const left = yield* backlog
      if (left === 0) break
      if (Date.now() - said >= progressMillis) {
        said = Date.now()
        yield* Effect.logInfo(`outbox: ${left} record(s) still to relay to ${topic}`)
      }
      yield* Effect.sleep("200 millis")
    }
    return { topic, relayed: before, millis: Date.now() - started } satisfies DrainReport
  }).pipe(Effect.scoped)
