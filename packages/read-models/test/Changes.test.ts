import { assert, describe, it } from "@effect/vitest"
import { EventLog, type LogRecord } from "@ocs/event-log"
import { DomainEvent, EngineRecord, Json } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { Effect, Fiber, Option, Schedule, Stream } from "effect"
import * as NodePath from "node:path"
import { APP, append, BIZ, files, layer, order, readLog, stockItem, syncPage, tenant, webhook } from "./helpers.ts"

/** A page of a pull, with the pass it belongs to and whether it is the resource's first (baseline). */
const page = (kind: string, items: ReadonlyArray<unknown>, options: { readonly pass?: string; readonly baseline?: boolean; readonly idField?: string; readonly updatedAtField?: string } = {}): LogRecord.NewRecord => {
  const p = syncPage(BIZ, kind, items, {
    ...(options.idField === undefined ? {} : { idField: options.idField }),
    ...(options.updatedAtField === undefined ? {} : { updatedAtField: options.updatedAtField })
  })
  return { ...p, meta: { ...p.meta, ...(options.pass === undefined ? {} : { pass: options.pass }), ...(options.baseline === true ? { baseline: true } : {}) } }
}

const passDone = (kind: string, id: string, startedAt: number): LogRecord.NewRecord => ({
  appId: APP,
  businessId: BIZ,
  source: "sync",
  type: EngineRecord.PASS_TYPE,
  body: JSON.stringify({ pass: { id, kind, startedAt } }),
  dedupeKey: `pass:${id}`
})

const product = (id: number, name: string, updatedAt: number) => ({ id, name, code: `P${id}`, prices: { retail: 10 }, inventory: { remain: 1 }, updatedAt })

/** Appends, projects, relays the changes found and projects them too; returns the events of the changes records. */
const step = (records: ReadonlyArray<LogRecord.NewRecord>) =>
  Effect.gen(function*() {
    const rm = yield* ReadModels.ReadModels
    const before = (yield* readLog).length
    yield* append(records)
    yield* rm.catchUp()
    yield* rm.catchUp()
    const all = yield* readLog
    return all.slice(before).filter((r) => r.type === EngineRecord.CHANGES_TYPE).flatMap((r) => DomainEvent.decode(r))
  })

const tags = (events: ReadonlyArray<DomainEvent.DomainEvent>) => events.map((e) => e._tag)

describe("changes found by comparing pulls with the copy", () => {
  it.live("a baseline pull reveals nothing; a pull of the state a webhook brought reveals nothing; a silent edit reveals one update with its fields", () => {
    const f = files()
    return Effect.gen(function*() {
      assert.deepStrictEqual(yield* step([page("product", [product(1, "a", 100), product(2, "b", 100)], { baseline: true })]), [])
      // The webhook is the event; the pull that follows sees the same state.
      yield* step([webhook(BIZ, "productUpdate", { ...product(1, "a2", 200), category: { id: 1 } })])
      assert.deepStrictEqual(yield* step([page("product", [product(1, "a2", 200), product(2, "b", 100)])]), [])
      // A change the service made without a webhook (or whose webhook was lost).
      const found = yield* step([page("product", [product(1, "a2", 200), product(2, "b2", 300)])])
      assert.deepStrictEqual(tags(found), ["ProductUpdated"])
      const updated = found[0] as DomainEvent.ProductUpdated
      assert.strictEqual(updated.source, "sync")
      assert.deepStrictEqual(updated.changedFields, ["name", "updatedAt"])
      assert.strictEqual(updated.product.name, "b2")
      // A stock total moving inside product/list is not a product change.
      assert.deepStrictEqual(yield* step([page("product", [{ ...product(2, "b2", 300), inventory: { remain: 9 } }])]), [])
      // A product the copy never had is created.
      assert.deepStrictEqual(tags(yield* step([page("product", [product(3, "c", 400)])])), ["ProductAdded"])
      const rm = yield* ReadModels.ReadModels
      assert.strictEqual(Option.getOrThrow(yield* rm.product(tenant, "2")).name, "b2")
      // Relaying again appends nothing: the outbox is empty.
      assert.strictEqual(yield* rm.relayChanges, 0)
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("stock is compared depot by depot; an order's status move is an event whatever told us", () => {
    const f = files()
    return Effect.gen(function*() {
      const inv = (levels: ReadonlyArray<readonly [number, number]>) => page("inventory", [{ productId: 7, inventory: stockItem(7, levels) }], { idField: "productId" })
      yield* step([{ ...inv([[1, 5], [2, 6]]), meta: { ...inv([]).meta, baseline: true } }])
      assert.deepStrictEqual(yield* step([inv([[1, 5], [2, 6]])]), [])
      const stock = yield* step([inv([[1, 5], [2, 4]])])
      assert.deepStrictEqual(tags(stock), ["InventoryChanged"])
      assert.deepStrictEqual((stock[0] as DomainEvent.InventoryChanged).items.map((l) => [l.depotId, Number(l.remain)]), [["1", 5], ["2", 4]])

      const orderPage = (status: number, updatedAt: number) => page("order", [order(50, { status, updatedAt, createdAt: 100 })], { idField: "info.id", updatedAtField: "info.updatedAt" })
      yield* step([{ ...orderPage(54, 100), meta: { ...orderPage(54, 100).meta, baseline: true } }])
      // By webhook: compared with the copy like a pull, so both come as changes, told by the webhook.
      const told = yield* step([webhook(BIZ, "orderUpdate", order(50, { status: 55, updatedAt: 200, createdAt: 100 }))])
      assert.deepStrictEqual(tags(told), ["OrderUpdated", "OrderStatusChanged"])
      assert.deepStrictEqual(told.map((e) => e.source), ["webhook", "webhook"])
      assert.deepStrictEqual(yield* step([orderPage(55, 200)]), [])
      // By pull only (the webhook was lost): both.
      const pulled = yield* step([orderPage(59, 300)])
      assert.deepStrictEqual(tags(pulled), ["OrderUpdated", "OrderStatusChanged"])
      const moved = pulled[1] as DomainEvent.OrderStatusChanged
      assert.deepStrictEqual([moved.orderId, moved.from, moved.to], ["50", "55", "59"])
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("each change once in the other order too: a webhook that arrives after a pull found its change is no second event", () => {
    const f = files()
    return Effect.gen(function*() {
      yield* step([page("product", [product(1, "a", 100), product(2, "b", 100)], { pass: "p1", baseline: true })])
      yield* step([page("inventory", [{ productId: 1, inventory: stockItem(1, [[1, 5]]) }], { idField: "productId", baseline: true })])
      // The pull comes first: the webhook was late.
      assert.deepStrictEqual(tags(yield* step([page("product", [product(1, "a2", 200), product(2, "b", 100)])])), ["ProductUpdated"])
      assert.deepStrictEqual(yield* step([webhook(BIZ, "productUpdate", { ...product(1, "a2", 200), category: { id: 1 } })]), [], "the same state, told late")
      assert.deepStrictEqual(yield* step([webhook(BIZ, "productUpdate", product(1, "a", 100))]), [], "an older state changes nothing")
      assert.deepStrictEqual(tags(yield* step([page("inventory", [{ productId: 1, inventory: stockItem(1, [[1, 9]]) }], { idField: "productId" })])), ["InventoryChanged"])
      assert.deepStrictEqual(yield* step([webhook(BIZ, "inventoryChange", [{ productId: 1, ...stockItem(1, [[1, 9]]) }])]), [])
      // A pass found product 2 gone; its productDelete arrives afterwards.
      yield* step([page("product", [product(1, "a2", 200)], { pass: "p2" })])
      assert.deepStrictEqual(tags(yield* step([passDone("product", "p2", Date.now() + 1000)])), ["ProductDeleted"])
      assert.deepStrictEqual(yield* step([webhook(BIZ, "productDelete", [2])]), [])
      // The webhook first: it is the event (told by the webhook), and the pull after it is none.
      const told = yield* step([webhook(BIZ, "productUpdate", product(1, "a3", 300))])
      assert.deepStrictEqual([tags(told), told[0]!.source], [["ProductUpdated"], "webhook"])
      assert.deepStrictEqual(yield* step([page("product", [product(1, "a3", 300)])]), [])
      // What a plugin of the server sees over the whole log: one event per change.
      const stream = (yield* readLog).flatMap((r) => DomainEvent.decodeChangeStream(r)).filter((e) => DomainEvent.comparedTags.has(e._tag))
      assert.deepStrictEqual(stream.map((e) => `${e._tag}:${Option.getOrUndefined(DomainEvent.entityId(e))}:${e.source}`), [
        "ProductUpdated:1:sync", "InventoryChanged:1:sync", "ProductDeleted:2:sync", "ProductUpdated:1:webhook"
      ])
      // Decoded straight, the five webhooks would each have been one more (the late ones a second time).
      assert.strictEqual((yield* readLog).flatMap((r) => DomainEvent.decode(r)).filter((e) => DomainEvent.comparedTags.has(e._tag)).length, 9)
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("a completed full pass deletes what it did not see; an unfinished pass deletes nothing", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* step([page("product", [product(1, "a", 100), product(2, "b", 100), product(3, "c", 100)], { pass: "p1", baseline: true })])
      assert.deepStrictEqual(yield* step([passDone("product", "p1", 0)]), [])
      // Pass p2 does not see product 2, but never completes (failed, interrupted): nothing goes.
      yield* step([page("product", [product(1, "a", 100)], { pass: "p2" })])
      assert.strictEqual((yield* rm.products(tenant)).items.length, 3)
      // Pass p3 sees 1 and 3 and completes: 2 is gone. A product received after the pass
      // started (4, by webhook) is not missing even though the pass did not list it.
      yield* step([page("product", [product(1, "a", 100), product(3, "c", 100)], { pass: "p3" })])
      const startedAt = Date.now()
      yield* Effect.sleep("5 millis")
      yield* step([webhook(BIZ, "productAdd", product(4, "d", 500))])
      const deleted = yield* step([passDone("product", "p3", startedAt)])
      assert.deepStrictEqual(tags(deleted), ["ProductDeleted"])
      assert.strictEqual((deleted[0] as DomainEvent.ProductDeleted).productId, "2")
      assert.deepStrictEqual((yield* rm.products(tenant)).items.map((p) => p.id).toSorted(), ["1", "3", "4"])
      // The same completion again (a redelivery) deletes nothing more.
      assert.deepStrictEqual(yield* step([{ ...passDone("product", "p3", startedAt), dedupeKey: "pass:p3:again" }]), [])
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("every kind a full pass reads gets tombstones: customers, bills, depots, categories, brands, a product's stock rows", () => {
    const f = files()
    // kind, its pages' id field, two records (the second will be gone), the deletion it gives
    const kinds = [
      { kind: "customer", idField: "id", items: [{ id: 11, name: "c1", updatedAt: 100 }, { id: 12, name: "c2", updatedAt: 100 }], tag: "CustomerDeleted", id: "customerId" },
      { kind: "bill", idField: "id", items: [{ id: 21, date: "2026-01-01", products: [] }, { id: 22, date: "2026-01-02", products: [] }], tag: "BillDeleted", id: "billId" },
      { kind: "depot", idField: "id", items: [{ id: 31, name: "d1" }, { id: 32, name: "d2" }], tag: "DepotDeleted", id: "depotId" },
      { kind: "category", idField: "id", items: [{ id: 41, name: "k1" }, { id: 42, name: "k2" }], tag: "CategoryDeleted", id: "categoryId" },
      { kind: "brand", idField: "id", items: [{ id: 51, name: "b1" }, { id: 52, name: "b2" }], tag: "BrandDeleted", id: "brandId" },
      {
        kind: "inventory", idField: "productId",
        items: [{ productId: 61, inventory: stockItem(61, [[1, 5], [2, 6]]) }, { productId: 62, inventory: stockItem(62, [[1, 7], [2, 8]]) }],
        tag: "InventoryDeleted", id: "productId"
      }
    ] as const
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      const live = Effect.gen(function*() {
        return {
          customer: (yield* rm.customers(tenant)).items.map((c) => c.id),
          bill: (yield* rm.bills(tenant)).items.map((b) => b.id),
          depot: (yield* rm.depots(tenant)).map((d) => d.id),
          category: (yield* rm.categories(tenant)).map((c) => c.id),
          brand: (yield* rm.brands(tenant)).map((b) => b.id),
          inventory: [...new Set((yield* rm.inventory(tenant)).map((l) => l.productId))]
        }
      })
      const all = { customer: ["11", "12"], bill: ["21", "22"], depot: ["31", "32"], category: ["41", "42"], brand: ["51", "52"], inventory: ["61", "62"] }
      for (const k of kinds) {
        yield* step([page(k.kind, k.items, { pass: `${k.kind}:1`, baseline: true, idField: k.idField })])
        assert.deepStrictEqual(yield* step([passDone(k.kind, `${k.kind}:1`, 0)]), [], `${k.kind}: nothing gone after the baseline`)
      }
      assert.deepStrictEqual(yield* live, all)
      // Second passes list only the first record of each kind, and do not complete: nothing goes.
      for (const k of kinds) yield* step([page(k.kind, [k.items[0]], { pass: `${k.kind}:2`, idField: k.idField })])
      assert.deepStrictEqual(yield* live, all, "an unfinished pass deletes nothing")
      // They complete: one typed deletion each, and the lists no longer hold them.
      const startedAt = Date.now() + 1000
      for (const k of kinds) {
        const found = yield* step([passDone(k.kind, `${k.kind}:2`, startedAt)])
        assert.deepStrictEqual(tags(found), [k.tag], k.kind)
        assert.strictEqual((found[0] as unknown as Record<string, unknown>)[k.id], String(k.items[1]![k.idField as keyof (typeof k.items)[1]]))
        assert.strictEqual(found[0]!.source, "sync")
      }
      assert.deepStrictEqual(yield* live, { customer: ["11"], bill: ["21"], depot: ["31"], category: ["41"], brand: ["51"], inventory: ["61"] })
      // A tombstone, not a hole: the row says it is deleted (stock: every depot of the product).
      const gone = (yield* rm.customers(tenant, { includeDeleted: true })).items.find((c) => c.id === "12")
      assert.isTrue(gone?.deleted)
      assert.strictEqual((yield* rm.counts(tenant)).inventory, 2)
      // A product served again is back, with its stock.
      yield* step([page("inventory", [kinds[5].items[1]], { idField: "productId" })])
      assert.deepStrictEqual((yield* live).inventory, ["61", "62"])
      // Replaying the log gives the same tables.
      const rebuilt = NodePath.join(f.dir, "rebuilt.db")
      yield* rm.rebuild({ filename: rebuilt })
      const other = yield* Effect.scoped(Effect.flatMap(ReadModels.make({ filename: rebuilt }), (r) => r.digest()))
      assert.deepStrictEqual(other, yield* rm.digest())
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("with several servers only the tenant's owner relays the changes; the others forget theirs", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* append([page("product", [product(1, "a", 100)], { baseline: true }), page("product", [product(1, "a1", 200)])])
      yield* rm.catchUp(undefined, { relays: () => false })
      assert.strictEqual((yield* readLog).filter((r) => r.type === EngineRecord.CHANGES_TYPE).length, 0)
      // Forgotten, not kept for later: the owner appends them.
      assert.strictEqual(yield* rm.relayChanges, 0)
      yield* append([page("product", [product(1, "a2", 300)])])
      yield* rm.catchUp(undefined, { relays: (appId, businessId) => appId === APP && businessId === BIZ })
      assert.strictEqual((yield* readLog).filter((r) => r.type === EngineRecord.CHANGES_TYPE).length, 1)
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("a new file over a log that already holds records: history is projected, not compared again", () => {
    const f = files()
    const second = NodePath.join(f.dir, "second.db")
    return Effect.gen(function*() {
      yield* step([page("product", [product(1, "a", 100)], { baseline: true }), page("product", [product(1, "a1", 200)])])
      const log = yield* readLog
      assert.strictEqual(log.filter((r) => r.type === EngineRecord.CHANGES_TYPE).length, 1)
      const head = log[log.length - 1]!.offset
      // The old file is gone; a new one starts over the same log.
      const again = (filename: string) =>
        Effect.scoped(Effect.gen(function*() {
          const rm = yield* ReadModels.make({ filename })
          const found = yield* rm.catchUp()
          return { found: found.changes ?? 0, relayed: yield* rm.relayChanges }
        }))
      const fresh = yield* Effect.scoped(Effect.gen(function*() {
        const rm = yield* ReadModels.make({ filename: second })
        yield* rm.historyUntil(head)
        const found = yield* rm.catchUp()
        return { found: found.changes ?? 0, digest: yield* rm.digest() }
      }))
      assert.strictEqual(fresh.found, 0, "nothing compared again")
      const live = yield* ReadModels.ReadModels
      assert.deepStrictEqual(fresh.digest, yield* live.digest())
      // Kept in the file: a new change after the history is found.
      yield* append([page("product", [product(1, "a2", 300)])])
      const later = yield* again(second)
      assert.strictEqual(later.found, 1)
      // Without it, a file started empty compares the history again.
      const blind = yield* again(NodePath.join(f.dir, "blind.db"))
      assert.isAbove(blind.found, 0)
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("replaying the log: a rebuild equals the live projection and appends nothing", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      const fiber = yield* rm.run()
      yield* append([page("product", [product(1, "a", 100), product(2, "b", 100)], { pass: "p1", baseline: true }), passDone("product", "p1", 0)])
      yield* append([page("product", [product(1, "a1", 200)], { pass: "p2" }), passDone("product", "p2", Date.now() + 1000)])
      const waitForChanges = Effect.gen(function*() {
        const log = yield* readLog
        const changes = log.filter((r) => r.type === EngineRecord.CHANGES_TYPE).length
        const head = log[log.length - 1]!.offset
        const stored = yield* rm.checkpoint()
        return changes === 2 && Option.getOrUndefined(stored) === `sqlite:${head}` ? log.length : undefined
      })
      const length = yield* waitForChanges.pipe(
        Effect.repeat({ until: (n) => n !== undefined, schedule: Schedule.spaced("20 millis") }),
        Effect.timeout("20 seconds")
      )
      yield* Fiber.interrupt(fiber)
      const events = (yield* readLog).filter((r) => r.type === EngineRecord.CHANGES_TYPE).flatMap((r) => DomainEvent.decode(r))
      assert.deepStrictEqual(tags(events), ["ProductUpdated", "ProductDeleted"])
      const rebuilt = NodePath.join(f.dir, "rebuilt.db")
      yield* rm.rebuild({ filename: rebuilt })
      const other = yield* Effect.scoped(Effect.flatMap(ReadModels.make({ filename: rebuilt }), (r) => r.digest()))
      assert.deepStrictEqual(other, yield* rm.digest())
      assert.strictEqual((yield* readLog).length, length)
      // The relay's dedupe key: the same changes relayed twice are one record.
      const log = yield* EventLog.EventLog
      const first = (yield* Stream.runCollect(log.read({ tenant: "all", types: [EngineRecord.CHANGES_TYPE] })))[0]!
      const again = yield* log.append([{ appId: first.appId, businessId: first.businessId, source: "sync", type: first.type, body: first.body, dedupeKey: first.dedupeKey }])
      assert.strictEqual(again[0]!._tag, "Duplicate")
      assert.isTrue(Json.parse(first.body)._tag === "Success")
    }).pipe(Effect.provide(layer(f, { batchSize: 16, maxBatchWaitMillis: 5 })))
  })
})
