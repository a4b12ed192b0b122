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
import { EventLog, LogRecord } from "@ocs/event-log"
import { DomainEvent, EngineRecord, Json } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { Effect, Option, Stream } from "effect"
import * as Crypto from "node:crypto"
import { APP, BIZ, files, layer, tenant } from "./helpers.ts"

const PAGE = 100
const product = (id: number) => ({ id, name: `product ${id}`, code: `P${id}`, prices: { retail: 10 }, inventory: { remain: 1 }, updatedAt: 1_700_000_000 })

/** The topic as the servers relayed into it: each record at the next position, from its server. */
const topic = () => {
  let position = 0
  const outboxes = new Map<string, number>()
  const deliver = (origin: string, record: LogRecord.NewRecord): LogRecord.LogRecord => {
    const outboxOffset = (outboxes.get(origin) ?? 0) + 1
    outboxes.set(origin, outboxOffset)
    const offset = position++
    return {
      // Partition 1: positions past the local log's offsets (the relayed changes go there).
      offset: LogRecord.topicPosition(1, String(offset)),
      id: Crypto.randomUUID(),
      appId: record.appId,
      businessId: record.businessId,
      source: record.source,
      type: record.type,
      receivedAt: record.receivedAt ?? Date.now(),
      body: record.body,
      dedupeKey: record.dedupeKey ?? null,
      meta: record.meta ?? {},
      entityId: null,
      kafka: { partition: 1, offset: String(offset), origin, outboxOffset }
    }
  }
  return { deliver }
}

/**
 * Page `n` (from 0) of a product/list full pass as a server appends it: the dedupe key names the
 * cursor and the text, not the pass (the same page read by two passes is the same fact).
 */
const page = (n: number, pages: number, pass: string, baseline: boolean): LogRecord.NewRecord => {
  const body = Json.stringify({ code: 1, data: Array.from({ length: PAGE }, (_, i) => product(n * PAGE + i + 1)), paginator: { next: n + 1 < pages ? { id: (n + 1) * PAGE } : null } })
  return {
    appId: APP,
    businessId: BIZ,
    source: "sync",
    type: "product/list.page",
    body,
    dedupeKey: `sync:${APP}:${BIZ}:product:${n}:${Crypto.createHash("sha256").update(body).digest("hex")}`,
    meta: EngineRecord.pageMeta({
      entity: { kind: "product", idField: "id", updatedAtField: "updatedAt" },
      mode: "full",
      pass,
      ...(baseline ? { baseline: true as const } : {}),
      cursor: n === 0 ? null : String(n * PAGE),
      next: n + 1 < pages ? String((n + 1) * PAGE) : null,
      records: PAGE,
      warnings: []
    }) as LogRecord.Meta
  }
}

const done = (pass: string, startedAt: number): LogRecord.NewRecord => ({
  appId: APP,
  businessId: BIZ,
  source: "sync",
  type: EngineRecord.PASS_TYPE,
  body: EngineRecord.encodePass({ pass: { id: pass, kind: "product", startedAt } }),
  dedupeKey: EngineRecord.passDedupeKey(APP, BIZ, pass)
})

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
      const t = topic()
      const started = Date.now() + 60_000
      // Server a's pass reads both pages and stops (the tenant moved); b, which had not yet
      // received a's state, begins its own pass: the same two pages, now copies.
      const records = [
        t.deliver("a", page(0, 2, "product:1", true)),
        t.deliver("a", page(1, 2, "product:1", true)),
        t.deliver("b", page(0, 2, "product:2", true)),
        t.deliver("b", page(1, 2, "product:2", true)),
        t.deliver("b", done("product:2", started))
      ]
      assert.deepStrictEqual(yield* project(records), { deleted: 0, live: 2 * PAGE })
    }).pipe(Effect.provide(layer(files()))))

  it.live("a pass handed over between its pages counts the pages of both servers; what no page listed is still deleted", () =>
    Effect.gen(function*() {
      const t = topic()
      const started = Date.now() + 60_000
      const records = [
        // A first pass of three pages by a: the baseline.
        ...[0, 1, 2].map((n) => t.deliver("a", page(n, 3, "product:1", true))),
        t.deliver("a", done("product:1", 0)),
        // The next pass: a reads page 1 under its pass, then b (its new owner) reads page 1
        // again as a pass of its own and goes on with pages 2 and 3 of the service, which no
        // longer serves products 201..300: the last page is short.
        t.deliver("a", page(0, 3, "product:3", false)),
        t.deliver("b", page(0, 3, "product:4", false)),
        t.deliver("b", page(1, 3, "product:4", false)),
        t.deliver("b", { ...page(2, 3, "product:4", false), body: Json.stringify({ code: 1, data: [], paginator: { next: null } }), dedupeKey: "sync:short-last-page" }),
        t.deliver("b", done("product:4", started))
      ]
      // Pages 1 and 2 are copies of the first pass's (not applied again) yet count for pass 4.
      assert.deepStrictEqual(yield* project(records), { deleted: PAGE, live: 2 * PAGE })
      const rm = yield* ReadModels.ReadModels
      // The last listed product stays; the first one no page listed is a tombstone.
      assert.isFalse(Option.getOrThrow(yield* rm.product(tenant, "200")).deleted)
      assert.isTrue(Option.getOrThrow(yield* rm.product(tenant, "201")).deleted)
    }).pipe(Effect.provide(layer(files()))))
})
