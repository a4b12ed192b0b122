/**
 * The read models in both stores, one test body each (docs/architecture.md §4.34): the SQLite
 * file and the PostgreSQL schema get the same records and must hold the same content (the same
 * digest, computed the same way), apply the same conflict rule and tombstones, apply each record
 * once, and a rebuild in one batch equals a live projection in small batches; change detection
 * finds the same changes (one event per change) whatever the batches.
 */
import { assert, describe, it } from "@effect/vitest"
import { databaseOfFile, postgresUnavailable } from "@ocs/postgres-server/testing"
import { type EventLog, type LogRecord, SqliteEventLog } from "@ocs/event-log"
import { DomainEvent, EngineRecord } from "@ocs/protocol"
import { type ReadApi, ReadModels } from "@ocs/read-models"
import Database from "better-sqlite3"
import { PostgresQuarantine, PostgresReadApi, PostgresStore } from "@ocs/read-models/postgres"
import { Effect, Option, type Scope } from "effect"
import { APP, append, BIZ, OTHER_BIZ, otherTenant, files, mixedRecords, order, readLog, stockItem, syncPage, tenant, webhook } from "../helpers.ts"

const database = databaseOfFile()

/** What the test body needs of a store. */
interface Store {
  readonly project: (records: ReadonlyArray<LogRecord.LogRecord>, accepts?: (appId: string, businessId: string) => boolean) => Effect.Effect<void, unknown>
  /** The offsets in quarantine, in order. */
  readonly quarantined: Effect.Effect<ReadonlyArray<number>, unknown>
  /** Projects the business's quarantined records from the log (its business is registered now). */
  readonly release: (t: typeof tenant) => Effect.Effect<void, unknown, EventLog.EventLog>
  readonly digest: Effect.Effect<{ readonly digest: string; readonly tables: Readonly<Record<string, { readonly sha256: string; readonly rows: number }>> }, unknown>
  readonly product: (id: string) => Effect.Effect<{ readonly name: string | null; readonly deleted: boolean; readonly lastSource: string } | undefined, unknown>
  /** The read API over the store (what the admin routes and the console read). */
  readonly reads: ReadApi.ReadApi
  /** The change outbox, in order: the revealing record's offset and the changes found. */
  readonly changes: Effect.Effect<ReadonlyArray<{ readonly offset: number; readonly body: string }>, unknown>
}

let schemas = 0

const stores: ReadonlyArray<readonly [string, (options?: { readonly detectChanges?: boolean }) => Effect.Effect<Store, unknown, Scope.Scope>]> = [
  ["sqlite", (options) =>
    Effect.gen(function*() {
      const filename = files().rm
      const rm = yield* ReadModels.make({ filename, detectChanges: options?.detectChanges ?? false })
      return {
        reads: rm,
        project: (records, accepts) => Effect.asVoid(rm.project(records, { accepts })),
        release: (t) => Effect.asVoid(rm.release(t)),
        quarantined: Effect.sync(() => {
          const db = new Database(filename, { readonly: true })
          try {
            return db.prepare<[], number>("SELECT offset FROM quarantined_records ORDER BY offset").pluck().all()
          } finally {
            db.close()
          }
        }),
        digest: rm.digest(),
        product: (id) => Effect.map(rm.product(tenant, id), Option.match({ onNone: () => undefined, onSome: (p) => ({ name: p.name, deleted: p.deleted, lastSource: p.lastSource }) })),
        changes: Effect.sync(() => {
          const db = new Database(filename, { readonly: true })
          try {
            return db.prepare<[], { offset: number; body: string }>("SELECT source_offset AS offset, body FROM change_outbox ORDER BY seq").all()
          } finally {
            db.close()
          }
        })
      } satisfies Store
    })],
  ["postgres", (options) =>
    Effect.gen(function*() {
      const pg = yield* PostgresStore.make({ url: database(), schema: `s${schemas++}`, pool: 2, detectChanges: options?.detectChanges ?? false })
      return {
        reads: PostgresReadApi.make(pg),
        project: (records, accepts) => Effect.asVoid(pg.project(records, undefined, { accepts })),
        release: (t) => Effect.asVoid(PostgresQuarantine.release(pg, t)),
        quarantined: Effect.map(pg.query<{ offset: number }>(`SELECT "offset" FROM quarantined_records ORDER BY "offset"`), (rows) => rows.map((r) => r.offset)),
        digest: pg.digest,
        product: (id) =>
          Effect.map(
            pg.query<{ name: string | null; deleted: number; last_source: string }>(
              "SELECT name, deleted, last_source FROM products WHERE app_id = $1 AND business_id = $2 AND id = $3",
              [tenant.appId, tenant.businessId, id]
            ),
            (rows) => rows[0] === undefined ? undefined : { name: rows[0].name, deleted: rows[0].deleted === 1, lastSource: rows[0].last_source }
          ),
        changes: Effect.map(pg.changes, (rows) => rows.map((row) => ({ offset: row.source_offset, body: row.body })))
      } satisfies Store
    })]
]

/** The records as the log hands them over (offsets, received times), from a real SQLite log. */
const logged = (records: ReadonlyArray<LogRecord.NewRecord>) =>
  Effect.suspend(() =>
    Effect.gen(function*() {
      yield* append(records)
      return yield* readLog
    }).pipe(Effect.provide(SqliteEventLog.layer({ filename: files().log }))))

const inBatches = (store: Store, records: ReadonlyArray<LogRecord.LogRecord>, size: number) =>
  Effect.forEach(Array.from({ length: Math.ceil(records.length / size) }, (_, i) => records.slice(i * size, (i + 1) * size)), (batch) => store.project(batch), { discard: true })

const T1 = "2024-01-01T00:00:00Z"
const T2 = "2024-01-02T00:00:00Z"

/** One log for both stores: the very same records (ids, offsets, times). */
let mixedLog: ReadonlyArray<LogRecord.LogRecord> | undefined
const mixed = Effect.suspend(() =>
  mixedLog !== undefined ? Effect.succeed(mixedLog) : Effect.tap(logged(mixedRecords(1200, 5)), (records) => Effect.sync(() => (mixedLog = records)))
)

/** Every read of the read API over both tenants: first pages, second pages, filters, single records. */
const readAll = (api: ReadApi.ReadApi) =>
  Effect.gen(function*() {
    const out: Record<string, unknown> = {}
    for (const t of [tenant, otherTenant]) {
      const at = (name: string, value: unknown) => (out[`${t.businessId} ${name}`] = value)
      const products = yield* api.products(t, { limit: 20, includeDeleted: true })
      at("products", products)
      at("products after", yield* api.products(t, { limit: 20, after: products.next }))
      // ASCII case folded, as SQLite's LIKE does (names are p<n>)
      at("products search", yield* api.products(t, { search: "P1" }))
      at("product", yield* api.product(t, products.items[3]!.id))
      at("inventory", yield* api.inventory(t))
      const orders = yield* api.orders(t, { limit: 10 })
      at("orders", orders)
      at("order", yield* api.order(t, orders.items[0]!.id))
      const bills = yield* api.bills(t, { limit: 10 })
      at("bills", bills)
      if (bills.items[0] !== undefined) at("bill", yield* api.bill(t, bills.items[0].id))
      const customers = yield* api.customers(t, { limit: 10 })
      at("customers", customers)
      if (customers.items[0] !== undefined) at("customer", yield* api.customer(t, customers.items[0].id))
      at("depots", yield* api.depots(t))
      at("categories", yield* api.categories(t))
      at("brands", yield* api.brands(t))
      at("payments", yield* api.payments(t, { limit: 10 }))
      at("webhooks", yield* api.webhooks(t))
      at("unknown", yield* api.unknownEvents(t, { limit: 10 }))
      at("counts", yield* api.counts(t))
      at("id map", yield* api.idMap(t, "product", { limit: 10 }))
      at("digest", yield* api.digest(t))
    }
    out["row counts"] = yield* api.rowCounts
    out["digest"] = yield* api.digest()
    return out
  })

/** A pull's page of a pass (`baseline`: the resource's first, which reveals nothing). */
const passPage = (kind: string, items: ReadonlyArray<unknown>, pass: string, options: { readonly baseline?: boolean; readonly idField?: string; readonly updatedAtField?: string } = {}): LogRecord.NewRecord => {
  const p = syncPage(BIZ, kind, items, {
    ...(options.idField === undefined ? {} : { idField: options.idField }),
    ...(options.updatedAtField === undefined ? {} : { updatedAtField: options.updatedAtField })
  })
  return { ...p, meta: { ...p.meta, pass, ...(options.baseline === true ? { baseline: true } : {}) } }
}

const passDone = (kind: string, id: string, startedAt: number): LogRecord.NewRecord => ({
  appId: APP,
  businessId: BIZ,
  source: "sync",
  type: EngineRecord.PASS_TYPE,
  body: JSON.stringify({ pass: { id, kind, startedAt } }),
  dedupeKey: `pass:${id}`
})

const item = (id: number, name: string, updatedAt: number) => ({ id, name, code: `P${id}`, prices: { retail: 10 }, inventory: { remain: 1 }, updatedAt })
const orderPage = (id: number, status: number, updatedAt: number, pass: string) =>
  passPage("order", [order(id, { status, updatedAt, createdAt: 100 })], pass, { idField: "info.id", updatedAtField: "info.updatedAt" })
const stockPage = (levels: ReadonlyArray<readonly [number, number]>, pass: string, baseline = false) =>
  passPage("inventory", [{ productId: 7, inventory: stockItem(7, levels) }], pass, { idField: "productId", baseline })

/**
 * A story in which rows are compared again and again: the same products, orders and stock
 * pulled, told by webhooks, deleted, and a full pass that finds one gone.
 */
const changesStory = () => [
  passPage("product", [item(1, "a", 100), item(2, "b", 100), item(4, "d", 100)], "p0", { baseline: true }),
  stockPage([[1, 5], [2, 6]], "s0", true),
  orderPage(50, 54, 100, "o0"),
  // the webhook is the change; the pull that follows sees the same state: no second event
  webhook(BIZ, "productUpdate", { ...item(1, "a2", 200), category: { id: 1 } }),
  passPage("product", [item(1, "a2", 200), item(2, "b", 100)], "p1"),
  // a silent edit, and a product new to the copy, then its webhook with the same state
  passPage("product", [item(1, "a2", 200), item(2, "b2", 300), item(3, "c", 300)], "p1"),
  webhook(BIZ, "productUpdate", { ...item(3, "c", 300), category: { id: 1 } }),
  // an order's status moves in a pull, then a webhook says so again
  orderPage(50, 55, 200, "o1"),
  webhook(BIZ, "orderUpdate", order(50, { status: 55, updatedAt: 200, createdAt: 100 })),
  orderPage(50, 57, 300, "o1"),
  // stock: a pull moves depot 2, the webhook of the same levels is no change, then a real one
  stockPage([[1, 5], [2, 9]], "s1"),
  webhook(BIZ, "inventoryChange", [{ productId: 7, ...stockItem(7, [[1, 5], [2, 9]]) }]),
  webhook(BIZ, "inventoryChange", [{ productId: 7, ...stockItem(7, [[1, 4], [2, 9]]) }]),
  // a delete webhook twice: one change
  webhook(BIZ, "productDelete", [2]),
  webhook(BIZ, "productDelete", [2]),
  // a full pass that sees 1 and 3: product 4 is gone (2 was deleted already); its completion twice
  passPage("product", [item(1, "a2", 200), item(3, "c", 300)], "full"),
  passDone("product", "full", Date.now() + 60_000),
  { ...passDone("product", "full", Date.now() + 60_000), dedupeKey: "pass:full:again" },
  // after the pass: product 1 edited silently, pulled twice in one batch
  passPage("product", [item(1, "a3", 400)], "p2"),
  passPage("product", [item(1, "a3", 400)], "p2")
]

let storyLog: ReadonlyArray<LogRecord.LogRecord> | undefined
const story = Effect.suspend(() =>
  storyLog !== undefined ? Effect.succeed(storyLog) : Effect.tap(logged(changesStory()), (records) => Effect.sync(() => (storyLog = records)))
)

/** A log kept for the quarantine test (release reads the log again), with its records. */
let releaseLog: { readonly file: string; readonly records: ReadonlyArray<LogRecord.LogRecord> } | undefined
const quarantineLog = Effect.suspend(() => {
  if (releaseLog !== undefined) return Effect.succeed(releaseLog)
  const file = files().log
  return Effect.gen(function*() {
    yield* append(mixedRecords(400, 11))
    return (releaseLog = { file, records: yield* readLog })
  }).pipe(Effect.provide(SqliteEventLog.layer({ filename: file })))
})

/** The changes of an outbox as the plugins will see them: the revealing offset and each event's tag and id. */
const changeEvents = (rows: ReadonlyArray<{ readonly offset: number; readonly body: string }>) =>
  rows.map((row) => ({
    offset: row.offset,
    events: DomainEvent.decode({ id: "x", offset: row.offset, appId: APP, businessId: BIZ, source: "sync", type: EngineRecord.CHANGES_TYPE, body: row.body, meta: {}, receivedAt: 0 })
      .map((e) => `${e._tag}${"changedFields" in e ? `(${(e.changedFields ?? []).join(",")})` : ""}`)
  }))

describe.skipIf(postgresUnavailable())("read models in both stores", () => {
  const digests: Record<string, unknown> = {}
  const changes: Record<string, unknown> = {}
  const reads: Record<string, Record<string, unknown>> = {}
  const released: Record<string, unknown> = {}

  for (const [name, open] of stores) {
    it.live(`${name}: a rebuild in one batch equals the live projection in small batches, and a redelivery changes nothing`, () =>
      Effect.gen(function*() {
        const records = yield* mixed
        const live = yield* open()
        yield* inBatches(live, records, 20)
        const rebuilt = yield* open()
        yield* rebuilt.project(records)
        const a = yield* live.digest
        const b = yield* rebuilt.digest
        assert.deepStrictEqual(b.tables, a.tables)
        assert.isAbove(a.tables["products"]!.rows, 50)
        assert.isAbove(a.tables["order_items"]!.rows, 10)
        // every record again, in other batches: applied once, so nothing moves
        yield* inBatches(live, records, 100)
        assert.strictEqual((yield* live.digest).digest, a.digest)
        digests[name] = a.tables
        reads[name] = yield* readAll(live.reads)
      }).pipe(Effect.scoped), 120_000)

    it.live(`${name}: change detection finds each change once, whatever the batches`, () =>
      Effect.gen(function*() {
        const records = yield* story
        // one record per transaction, as the SQLite projector compares them, and the whole story in one
        const one = yield* open({ detectChanges: true })
        yield* inBatches(one, records, 1)
        const all = yield* open({ detectChanges: true })
        yield* all.project(records)
        const found = changeEvents(yield* one.changes)
        assert.deepStrictEqual(changeEvents(yield* all.changes), found)
        assert.deepStrictEqual(found.flatMap((c) => c.events), [
          "OrderAdded",
          // the webhook's (origin "webhook"), then the silent edit; the pull between them is no change
          "ProductUpdated(name,updatedAt)",
          "ProductUpdated(name,updatedAt)",
          "ProductAdded",
          "OrderUpdated(info)",
          "OrderStatusChanged",
          "OrderUpdated(info)",
          "OrderStatusChanged",
          "InventoryChanged",
          "InventoryChanged",
          "ProductDeleted",
          "ProductDeleted",
          "ProductUpdated(name,updatedAt)"
        ])
        // a redelivery finds nothing new
        yield* all.project(records)
        assert.strictEqual((yield* all.changes).length, found.length)
        changes[name] = found
      }).pipe(Effect.scoped), 60_000)

    it.live(`${name}: Kafka mode drops another copy of a fact; a refused business is quarantined, not applied`, () =>
      Effect.gen(function*() {
        const records = (yield* mixed).slice(0, 240)
        // as read from a topic: every record keyed; every tenth copied later at another position
        // (received now: keys older than the dedupe window are forgotten)
        const now = Date.now()
        const fromTopic = records.map((r) => ({ ...r, receivedAt: now, dedupeKey: `k:${r.offset}`, kafka: { partition: 0, offset: String(r.offset) } }))
        const copies = fromTopic.filter((_, i) => i % 10 === 0).map((r, i) => ({ ...r, id: `copy-${i}`, offset: 100_000 + i, kafka: { partition: 0, offset: String(100_000 + i) } }))
        const once = yield* open()
        yield* inBatches(once, fromTopic, 80)
        const twice = yield* open()
        yield* inBatches(twice, [...fromTopic, ...copies], 80)
        // the copies again, alone: still copies
        yield* twice.project(copies.slice(0, 5))
        assert.strictEqual((yield* twice.digest).digest, (yield* once.digest).digest)

        const refusing = yield* open()
        const accepts = (_: string, businessId: string) => businessId === BIZ
        yield* inBatches({ ...refusing, project: (batch) => refusing.project(batch, accepts) }, records, 80)
        const quarantined = yield* refusing.quarantined
        assert.deepStrictEqual(quarantined, records.filter((r) => r.businessId !== null && r.businessId !== BIZ).map((r) => r.offset))
        assert.isAbove(quarantined.length, 10)
        const onlyBiz = yield* open()
        yield* onlyBiz.project(records.filter((r) => r.businessId === null || r.businessId === BIZ))
        assert.strictEqual((yield* refusing.digest).digest, (yield* onlyBiz.digest).digest)
      }).pipe(Effect.scoped), 60_000)

    it.live(`${name}: a business registered later gets its quarantined records from the log, as if accepted from the start`, () =>
      Effect.gen(function*() {
        const { file, records } = yield* quarantineLog
        const store = yield* open({ detectChanges: true })
        const accepts = (_: string, businessId: string) => businessId === BIZ
        yield* inBatches({ ...store, project: (batch) => store.project(batch, accepts) }, records, 100)
        const held = records.filter((r) => r.businessId === OTHER_BIZ).map((r) => r.offset)
        assert.deepStrictEqual(yield* store.quarantined, held)
        assert.isAbove(held.length, 100)
        // the business is registered: its records come from the log, and leave the quarantine
        const log = SqliteEventLog.layer({ filename: file })
        yield* store.release(otherTenant).pipe(Effect.provide(log))
        assert.deepStrictEqual(yield* store.quarantined, [])
        const digest = yield* store.digest
        // released once: a second release finds nothing, a redelivery of the log changes nothing
        yield* store.release(otherTenant).pipe(Effect.provide(log))
        yield* inBatches(store, records, 100)
        assert.strictEqual((yield* store.digest).digest, digest.digest)
        const accepted = yield* open()
        yield* inBatches(accepted, records, 100)
        assert.deepStrictEqual(digest.tables, (yield* accepted.digest).tables)
        assert.isAbove(digest.tables["products"]!.rows, 50)
        released[name] = { digest, reads: yield* readAll(store.reads), changes: changeEvents(yield* store.changes) }
      }).pipe(Effect.scoped), 60_000)

    it.live(`${name}: newer updatedAt wins, else log order; a delete is a tombstone a stale page cannot undo`, () =>
      Effect.gen(function*() {
        const store = yield* open()
        const records = yield* logged([
          webhook(BIZ, "productUpdate", { id: 1, name: "from webhook", updatedAt: T2 }),
          syncPage(BIZ, "product", [{ id: 1, name: "stale page", updatedAt: T1 }]),
          webhook(BIZ, "productUpdate", { id: 2, name: "newer", updatedAt: T2 }),
          webhook(BIZ, "productUpdate", { id: 2, name: "older, delivered late", updatedAt: T1 }),
          syncPage(BIZ, "product", [{ id: 3, name: "three", updatedAt: T1 }]),
          webhook(BIZ, "productDelete", [3]),
          syncPage(BIZ, "product", [{ id: 3, name: "three, stale", updatedAt: T1 }]),
          syncPage(BIZ, "product", [{ id: 4, name: "no time" }]),
          syncPage(BIZ, "product", [{ id: 4, name: "no time, later" }])
        ])
        // one batch holds the whole story: the rule must hold within a batch too
        yield* store.project(records)
        assert.deepStrictEqual(yield* store.product("1"), { name: "from webhook", deleted: false, lastSource: "webhook" })
        assert.strictEqual((yield* store.product("2"))?.name, "newer")
        assert.deepStrictEqual(yield* store.product("3"), { name: null, deleted: true, lastSource: "webhook" })
        assert.strictEqual((yield* store.product("4"))?.name, "no time, later")
      }).pipe(Effect.scoped))
  }

  it("both stores hold the same content for the same log (equal digests)", () => {
    assert.strictEqual(Object.keys(digests).length, 2)
    assert.deepStrictEqual(digests["postgres"], digests["sqlite"])
  })

  it("the read API answers the same from both stores (what the admin routes and the console show)", () => {
    assert.strictEqual(Object.keys(reads).length, 2)
    assert.isAbove(Object.keys(reads["sqlite"]!).length, 40)
    assert.strictEqual((reads["postgres"]![`${BIZ} products`] as { items: ReadonlyArray<unknown> }).items.length, 20)
    assert.isAbove((reads["postgres"]![`${BIZ} products search`] as { items: ReadonlyArray<unknown> }).items.length, 0)
    assert.isAbove((reads["postgres"]![`${BIZ} orders`] as { items: ReadonlyArray<unknown> }).items.length, 0)
    for (const key of Object.keys(reads["sqlite"]!)) assert.deepStrictEqual(reads["postgres"]![key], reads["sqlite"]![key], key)
  })

  it("both stores release quarantined records the same way (content, reads, changes)", () => {
    assert.strictEqual(Object.keys(released).length, 2)
    assert.deepStrictEqual(released["postgres"], released["sqlite"])
  })

  it("both stores find the same changes for the same log", () => {
    assert.strictEqual(Object.keys(changes).length, 2)
    assert.deepStrictEqual(changes["postgres"], changes["sqlite"])
  })
})
