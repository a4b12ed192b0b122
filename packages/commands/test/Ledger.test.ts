/**
 * The ledger's append bound to the log (docs/architecture.md §4.31): through the log's
 * `DirectAppend` when the context has one, else `EventLog.append`; either way durable before it
 * answers, one commit for transitions that follow each other, and a request's idempotency key
 * appended once.
 */
import { assert, describe, it } from "@effect/vitest"
import { DirectAppend, EventLog, SqliteEventLog } from "@ocs/event-log"
import { EngineRecordCommands } from "@ocs/protocol"
import { Context, Effect, Layer, Option, Stream } from "effect"
import * as Ledger from "../src/CommandLedger.ts"
import { tempLog } from "./helpers.ts"

const tenant = { appId: "71001", businessId: "81001" }
const admin = { type: "admin" } as const

const requested = (command: string, key: string): EngineRecordCommands.Transition => ({
  state: "requested",
  command,
  kind: "product.edit",
  payload: { id: 5, price: 1000 },
  requestedBy: admin,
  idempotencyKey: key,
  fingerprint: `fp-${command}`
})

/** Appends through the appender, then reads the log back from a fresh connection. */
const roundTrip = (layer: (file: string) => Layer.Layer<EventLog.EventLog, unknown>) => {
  const file = tempLog()
  return Effect.gen(function*() {
    const results = yield* Effect.scoped(Effect.gen(function*() {
      const append = yield* Ledger.appender
      const first = yield* append(tenant, [requested("c-1", "k-1")])
      const pair = yield* append(tenant, [{ state: "sent", command: "c-1", attempt: 1 }, {
        state: "answered",
        command: "c-1",
        attempt: 1,
        status: 200,
        body: "{\"code\":1}"
      }])
      // The same idempotency key again: the log keeps the first request.
      const again = yield* append(tenant, [requested("c-2", "k-1")])
      return { first, pair, again }
    }).pipe(Effect.provide(layer(file))))
    assert.strictEqual(results.first.results[0]!._tag, "Appended")
    assert.deepStrictEqual(results.pair.results.map((r) => r._tag), ["Appended", "Appended"])
    assert.strictEqual(results.pair.results[1]!.offset, results.pair.results[0]!.offset + 1, "one call, contiguous")
    assert.strictEqual(results.again.results[0]!._tag, "Duplicate")
    assert.strictEqual(results.again.results[0]!.offset, results.first.results[0]!.offset)
    const records = yield* Effect.scoped(Effect.flatMap(EventLog.EventLog, (log) => Stream.runCollect(log.read({ tenant: "all", types: [EngineRecordCommands.COMMAND_TYPE] }))).pipe(
      Effect.provide(SqliteEventLog.layer({ filename: file, synchronous: "NORMAL" }))
    ))
    assert.deepStrictEqual(records.map((r) => Option.getOrThrow(Ledger.transitionOf(r)).state), ["requested", "sent", "answered"])
    assert.deepStrictEqual(records.map((r) => r.receivedAt), [results.first.at, results.pair.at, results.pair.at])
    const commands = yield* Ledger.load().pipe(Effect.provide(SqliteEventLog.layer({ filename: file, synchronous: "NORMAL" })), Effect.scoped)
    assert.strictEqual(commands.get("c-1")?.state, "sending")
    assert.strictEqual(commands.get("c-1")?.lastAnswer, "{\"code\":1}")
    assert.isFalse(commands.has("c-2"))
  })
}

describe("the ledger's appender", () => {
  it.live("through the log's DirectAppend", () =>
    roundTrip((file) => SqliteEventLog.layer({ filename: file, synchronous: "NORMAL" })))

  it.live("through EventLog.append when the context has no DirectAppend (a log wrapping another)", () =>
    roundTrip((file) =>
      Layer.effectContext(Effect.map(
        Layer.build(SqliteEventLog.layer({ filename: file, synchronous: "NORMAL" })),
        // Only the EventLog: what a wrapping log provides when it builds no DirectAppend.
        (context) => Context.make(EventLog.EventLog, Context.get(context, EventLog.EventLog))
      ))))

  it.live("a context with DirectAppend uses it, not EventLog.append", () => {
    const file = tempLog()
    let direct = 0
    return Effect.gen(function*() {
      const append = yield* Ledger.appender
      yield* append(tenant, [requested("c-9", "k-9")])
      assert.strictEqual(direct, 1)
    }).pipe(
      Effect.provide(Layer.effectContext(Effect.map(
        Layer.build(SqliteEventLog.layer({ filename: file, synchronous: "NORMAL" })),
        (context) => {
          const inner = Context.get(context, DirectAppend.DirectAppend)
          return Context.make(EventLog.EventLog, Context.get(context, EventLog.EventLog)).pipe(
            Context.add(DirectAppend.DirectAppend, { append: (batch, onExit) => (direct++, inner.append(batch, onExit)) })
          )
        }
      ))),
      Effect.scoped
    )
  })
})
