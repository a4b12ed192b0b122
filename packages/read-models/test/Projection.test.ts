import { assert, describe, it } from "@effect/vitest"
import { ReadModels } from "@ocs/read-models"
import { Effect, Option } from "effect"
import { APP, BIZ, appendAndProject, files, layer, syncPage, tenant, webhook } from "./helpers.ts"

const BIG = 9007199254740993123n

describe("projection of each event kind", () => {
  it.live("products: big ids exact, unknown fields kept, price text, updatedAt parsed", () => {
    const f = files()
    return Effect.gen(function*() {
      const stats = yield* appendAndProject([
        webhook(BIZ, "productAdd", {
          id: BIG, appProductId: "ap-1", code: "SKU-1", barcode: "893", name: "Phở bò", price: 123456789012345678901n,
          updatedAt: "2024-05-01 10:00:00", vendorExtra: { nested: [1, 2, 12345678901234567890n] }
        })
      ])
      assert.strictEqual(stats.records, 1)
      const rm = yield* ReadModels.ReadModels
      const p = Option.getOrThrow(yield* rm.product(tenant, BIG.toString()))
      assert.strictEqual(p.id, "9007199254740993123")
      assert.strictEqual(p.businessId, BIZ)
      assert.strictEqual(p.name, "Phở bò")
      assert.strictEqual(p.priceText, "123456789012345678901")
      assert.strictEqual(p.updatedAt, "2024-05-01 10:00:00")
      assert.strictEqual(p.updatedAtMs, Date.UTC(2024, 4, 1, 10))
      assert.isFalse(p.deleted)
      const record = p.record as Record<string, unknown>
      assert.deepStrictEqual(record["vendorExtra"], { nested: [1, 2, 12345678901234567890n] })
      assert.strictEqual(record["price"], 123456789012345678901n)
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("productUpdate replaces, productDelete leaves a tombstone", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        webhook(BIZ, "productAdd", { id: 1, name: "A", price: 10 }),
        webhook(BIZ, "productUpdate", { id: 1, name: "A2", price: 11.5 })
      ])
      assert.strictEqual(Option.getOrThrow(yield* rm.product(tenant, "1")).name, "A2")
      yield* appendAndProject([webhook(BIZ, "productDelete", { id: 1 })])
      const gone = Option.getOrThrow(yield* rm.product(tenant, "1"))
      assert.isTrue(gone.deleted)
      assert.isNull(gone.name)
      assert.strictEqual((yield* rm.products(tenant)).items.length, 0)
      assert.strictEqual((yield* rm.products(tenant, { includeDeleted: true })).items.length, 1)
      const counts = yield* rm.counts(tenant)
      assert.strictEqual(counts.products, 0)
      assert.strictEqual(counts.deletedProducts, 1)
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("inventoryChange with several items updates several rows", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        webhook(BIZ, "inventoryChange", { products: [
          { productId: BIG, depotId: 1, quantity: 5 },
          { productId: BIG, depotId: 2, quantity: 7.25 },
          { productId: 2, quantity: 99999999999999999999n }
        ] })
      ])
      const rows = yield* rm.inventory(tenant)
      assert.deepStrictEqual(rows.map((r) => [r.productId, r.depotId, r.quantityText]), [
        ["2", "", "99999999999999999999"],
        [BIG.toString(), "1", "5"],
        [BIG.toString(), "2", "7.25"]
      ])
      yield* appendAndProject([webhook(BIZ, "inventoryChange", [{ productId: BIG, depotId: 2, quantity: 0 }])])
      const one = yield* rm.inventory(tenant, BIG.toString())
      assert.deepStrictEqual(one.map((r) => [r.depotId, r.quantity]), [["1", 5], ["2", 0]])
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("orders: lines, status as received, appOrderId from the deprecated orderPrivateId", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        webhook(BIZ, "orderAdd", {
          id: BIG, orderPrivateId: "web-7", customerName: "Trần B", customerMobile: "0900000001", status: 3,
          products: [{ id: 1, quantity: 2 }, { id: 2, quantity: 1 }]
        }),
        webhook(BIZ, "orderAdd", { id: 5, appOrderId: "web-8", orderPrivateId: "old", status: "new" })
      ])
      const o = Option.getOrThrow(yield* rm.order(tenant, BIG.toString()))
      assert.strictEqual(o.appOrderId, "web-7")
      assert.strictEqual(o.status, "3")
      assert.strictEqual(o.customerMobile, "0900000001")
      assert.strictEqual(o.lineCount, 2)
      assert.deepStrictEqual(o.lines, [{ id: 1, quantity: 2 }, { id: 2, quantity: 1 }])
      assert.strictEqual(Option.getOrThrow(yield* rm.order(tenant, "5")).appOrderId, "web-8")
      assert.deepStrictEqual((yield* rm.orders(tenant, { appOrderId: "web-7" })).items.map((x) => x.id), [BIG.toString()])
      assert.deepStrictEqual((yield* rm.orders(tenant, { status: "new" })).items.map((x) => x.id), ["5"])
      yield* appendAndProject([webhook(BIZ, "orderDelete", { id: 5 })])
      assert.deepStrictEqual((yield* rm.orders(tenant)).items.map((x) => x.id), [BIG.toString()])
      assert.isTrue(Option.getOrThrow(yield* rm.order(tenant, "5")).deleted)
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("payments, webhooksEnabled, documents, sync pages and unknown events", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        webhook(BIZ, "paymentReceived", { id: 77, orderId: BIG, amount: 150000, method: "bank" }),
        webhook(BIZ, "paymentReceived", { orderId: 8, amount: 1 }),
        webhook(null, "webhooksEnabled", { registeredEvents: { "101": "productAdd", "110": "inventoryChange" } }),
        syncPage(BIZ, "invoice", [{ invoiceNo: 12345678901234567890n, total: 10, updatedAt: 1714557600 }, { total: 3 }], { idField: "invoiceNo" }),
        syncPage(BIZ, "product", [{ id: 3, name: "P3", updatedAt: "2024-01-01T00:00:00Z" }, { id: 4, name: "P4" }]),
        syncPage(BIZ, "order", [{ id: 9, orderPrivateId: "alias-9" }]),
        webhook(BIZ, "orderCarrierAssigned", { id: 1 }),
        webhook(BIZ, "productAdd", { name: "no id" })
      ])
      const payments = (yield* rm.payments(tenant)).items
      assert.strictEqual(payments.length, 2)
      assert.deepStrictEqual(payments.find((p) => p.id === "77")?.orderId, BIG.toString())
      assert.match(payments.find((p) => p.id !== "77")!.id, /^event:/)
      assert.deepStrictEqual((yield* rm.payments(tenant, { orderId: BIG.toString() })).items.map((p) => p.id), ["77"])

      const hooks = Option.getOrThrow(yield* rm.webhooks(tenant))
      assert.deepStrictEqual(hooks.registeredEvents, { "101": "productAdd", "110": "inventoryChange" })

      const invoices = (yield* rm.documents(tenant, "invoice")).items
      assert.strictEqual(invoices.length, 2)
      const invoice = Option.getOrThrow(yield* rm.document(tenant, "invoice", "12345678901234567890"))
      assert.strictEqual(invoice.updatedAtMs, 1714557600000)
      assert.deepStrictEqual(invoice.body, { invoiceNo: 12345678901234567890n, total: 10, updatedAt: 1714557600 })

      assert.deepStrictEqual((yield* rm.products(tenant)).items.map((p) => [p.id, p.lastSource]), [["3", "sync"], ["4", "sync"]])
      assert.strictEqual(Option.getOrThrow(yield* rm.order(tenant, "9")).appOrderId, "alias-9")

      const unknown = (yield* rm.unknownEvents(tenant)).items
      assert.deepStrictEqual(unknown.map((u) => u.type).sort(), ["orderCarrierAssigned", "productAdd"])
      assert.match(unknown.find((u) => u.type === "productAdd")!.reason, /without id/)
      const counts = yield* rm.counts(tenant)
      assert.deepStrictEqual(counts, {
        products: 2, deletedProducts: 0, inventory: 0, orders: 1, deletedOrders: 0, payments: 2, documents: 2, unknownEvents: 2
      })
      assert.strictEqual(APP, hooks.appId)
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("products search and keyset pages", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        syncPage(BIZ, "product", Array.from({ length: 25 }, (_, i) => ({ id: 100 + i, name: i % 2 === 0 ? `Cà phê ${i}` : `Trà 50%_${i}`, code: `C${i}` })))
      ])
      const first = yield* rm.products(tenant, { limit: 10 })
      assert.strictEqual(first.items.length, 10)
      const second = yield* rm.products(tenant, { limit: 10, after: first.next })
      const third = yield* rm.products(tenant, { limit: 10, after: second.next })
      assert.strictEqual(third.items.length, 5)
      assert.isUndefined(third.next)
      assert.strictEqual(new Set([...first.items, ...second.items, ...third.items].map((p) => p.id)).size, 25)
      assert.strictEqual((yield* rm.products(tenant, { search: "cà" })).items.length, 13)
      assert.strictEqual((yield* rm.products(tenant, { search: "CÀ" })).items.length, 0) // LIKE folds ASCII only
      assert.strictEqual((yield* rm.products(tenant, { search: "50%_" })).items.length, 12)
      assert.deepStrictEqual((yield* rm.products(tenant, { search: "c24" })).items.map((p) => p.id), ["124"])
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("sync state round trips per tenant and resource", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* rm.setSyncState(tenant, "product", { cursor: `{"after":12345678901234567890}`, status: "running" })
      yield* rm.setSyncState(tenant, "product", { lastFullSyncAt: 1000, status: "attention", attentionReason: "ERR_403" })
      const [state] = yield* rm.syncState(tenant)
      assert.strictEqual(state!.cursor, `{"after":12345678901234567890}`)
      assert.strictEqual(state!.lastFullSyncAt, 1000)
      assert.strictEqual(state!.status, "attention")
      assert.strictEqual(state!.attentionReason, "ERR_403")
    }).pipe(Effect.provide(layer(f)))
  })
})
