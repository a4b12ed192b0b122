/**
 * Records of full passes as several Kafka-mode servers put them on one topic (docs/architecture.md
 * §4.14, §4.18): pages of 100 products with their pass, completions, each delivered at the next
 * topic position from its server's outbox. Shared by the SQLite and PostgreSQL tests of copies.
 */
import { LogRecord } from "@ocs/event-log"
import { EngineRecord, Json } from "@ocs/protocol"
import * as Crypto from "node:crypto"
import { APP, BIZ } from "./helpers.ts"

export const PAGE = 100
const product = (id: number) => ({ id, name: `product ${id}`, code: `P${id}`, prices: { retail: 10 }, inventory: { remain: 1 }, updatedAt: 1_700_000_000 })

/** The topic as the servers relayed into it: each record at the next position, from its server. */
export const topic = () => {
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
export const page = (n: number, pages: number, pass: string, baseline: boolean): LogRecord.NewRecord => {
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

export const done = (pass: string, startedAt: number): LogRecord.NewRecord => ({
  appId: APP,
  businessId: BIZ,
  source: "sync",
  type: EngineRecord.PASS_TYPE,
  body: EngineRecord.encodePass({ pass: { id: pass, kind: "product", startedAt } }),
  dedupeKey: EngineRecord.passDedupeKey(APP, BIZ, pass)
})

/** A pass another server ran again from page 1 after a handover: both its pages are copies. Nothing is gone. */
export const rerunFromPageOne = (): ReadonlyArray<LogRecord.LogRecord> => {
  const t = topic()
  const started = Date.now() + 60_000
  // Server a's pass reads both pages and stops (the tenant moved); b, which had not yet
  // received a's state, begins its own pass: the same two pages, now copies.
  return [
    t.deliver("a", page(0, 2, "product:1", true)),
    t.deliver("a", page(1, 2, "product:1", true)),
    t.deliver("b", page(0, 2, "product:2", true)),
    t.deliver("b", page(1, 2, "product:2", true)),
    t.deliver("b", done("product:2", started))
  ]
}

/**
 * A second pass handed over between its pages, its first two pages copies of the first pass's,
 * its last page empty: the service no longer serves products 201..300 (PAGE of them are gone).
 */
export const handedOverBetweenPages = (): ReadonlyArray<LogRecord.LogRecord> => {
  const t = topic()
  const started = Date.now() + 60_000
  return [
    // A first pass of three pages by a: the baseline.
    ...[0, 1, 2].map((n) => t.deliver("a", page(n, 3, "product:1", true))),
    t.deliver("a", done("product:1", 0)),
    // The next pass: a reads page 1 under its pass, then b (its new owner) reads page 1
    // again as a pass of its own and goes on with pages 2 and 3.
    t.deliver("a", page(0, 3, "product:3", false)),
    t.deliver("b", page(0, 3, "product:4", false)),
    t.deliver("b", page(1, 3, "product:4", false)),
    t.deliver("b", { ...page(2, 3, "product:4", false), body: Json.stringify({ code: 1, data: [], paginator: { next: null } }), dedupeKey: "sync:short-last-page" }),
    t.deliver("b", done("product:4", started))
  ]
}
