/**
 * Kafka mode, several servers (docs/architecture.md §4.14, §4.18, §4.19): a page that two
 * servers appended reaches the topic twice under one dedupe key and is applied once. When the
 * copies belong to different full passes (a server began a pass of its own before the state of
 * another's reached it, or went on with a pass it took over), the copy not applied still tells
 * which entities its pass saw: a completion deletes only what the pages of ITS pass, from
 * whichever server, did not list. No broker: the records are delivered as the topic delivers
 * them (topic positions, each server's origin).
 */
import { assert, describe, it } from "@effect/vitest"
import { EventLog, type LogRecord } from "@ocs/event-log"
import { DomainEvent, EngineRecord } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { Effect, Option, Stream } from "effect"
import { files, layer, tenant } from "./helpers.ts"
import { handedOverBetweenPages, PAGE, rerunFromPageOne } from "./passCopies.ts"

/** Projects the delivered records, relays the changes found; the deletions they hold, and the live products. */
const project = (records: ReadonlyArray<LogRecord.LogRecord>) =>
  Effect.gen(function*() {
    const rm = yield* ReadModels.ReadModels
    // The topic's checkpoint is not the local log's (which the relayed changes are read from).
    yield* rm.project(records, { consumer: "topic" })
    yield* rm.relayChanges
    // The deletions found, relayed to the log, are projected too (tombstones).
    yield* rm.catchUp()
    const log = yield* EventLog.EventLog
    const changes = yield* Stream.runCollect(log.read({ tenant: "all" }))
    const deleted = changes.filter((r) => r.type === EngineRecord.CHANGES_TYPE).flatMap((r) => DomainEvent.decode(r)).filter((e) => e._tag === "ProductDeleted").length
    const live = (yield* rm.products(tenant, { limit: 1000 })).items.length
    return { deleted, live }
  })

describe("a full pass whose pages two servers appended", () => {
  it.live("a pass another server ran again from page 1 (its pages copies of the first's) deletes nothing", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* project(rerunFromPageOne()), { deleted: 0, live: 2 * PAGE })
    }).pipe(Effect.provide(layer(files()))))

  it.live("a pass handed over between its pages counts the pages of both servers; what no page listed is still deleted", () =>
    Effect.gen(function*() {
      // Pages 1 and 2 are copies of the first pass's (not applied again) yet count for pass 4.
      assert.deepStrictEqual(yield* project(handedOverBetweenPages()), { deleted: PAGE, live: 2 * PAGE })
      const rm = yield* ReadModels.ReadModels
      // The last listed product stays; the first one no page listed is a tombstone.
      assert.isFalse(Option.getOrThrow(yield* rm.product(tenant, "200")).deleted)
      assert.isTrue(Option.getOrThrow(yield* rm.product(tenant, "201")).deleted)
    }).pipe(Effect.provide(layer(files()))))
})
