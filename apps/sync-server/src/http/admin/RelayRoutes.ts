/**
 * Kafka mode: the event-log relay. `GET /admin/relay` is its status (up, failing since, the
 * request limit it sizes by) and the records it set aside because the topic does not accept
 * them (relay dead letters: each stays in the outbox). `POST /admin/relay/redrive` reads the
 * topic's limit again and puts every dead letter that now fits on the topic; an operator raises
 * the topic's `max.message.bytes` first (docs/operations.md). Over the SQLite log: 404.
 */
import { Effect, Option } from "effect"
import type { HttpRouter } from "effect/http"
import { KafkaEventLog } from "@ocs/event-log"
import { type AdminOptions, guard, json, problem } from "./AdminHttp.ts"

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions) =>
  Effect.gen(function*() {
    const admin = guard(options)
    const relay = yield* Effect.serviceOption(KafkaEventLog.RelayProgress)
    const notKafka = problem(404, "the event log is not in Kafka mode: there is no relay")
    yield* router.add(
      "GET",
      "/admin/relay",
      admin(Option.match(relay, {
        onNone: () => Effect.succeed(notKafka),
        onSome: (r) =>
          Effect.gen(function*() {
            return json({ status: yield* r.status, deadLetters: yield* r.deadLetters })
          })
      }))
    )
    yield* router.add(
      "POST",
      "/admin/relay/redrive",
      admin(Option.match(relay, {
        onNone: () => Effect.succeed(notKafka),
        onSome: (r) => Effect.map(r.redrive, (result) => json(result))
      }))
    )
  })
