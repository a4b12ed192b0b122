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

  it.live("products: retail price from prices.retail, category and brand from either shape", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        syncPage(BIZ, "product", [{ id: 1, name: "list shape", prices: { retail: 99999999999999999999n, import: 5 }, categoryId: 7, brandId: 8, price: 1 }]),
        webhook(BIZ, "productUpdate", { id: 2, name: "detail shape", prices: { retail: "150000" }, category: { id: 9, name: "Trà" }, brand: { id: 10, name: "B" } })
      ])
      const one = Option.getOrThrow(yield* rm.product(tenant, "1"))
      assert.deepStrictEqual([one.priceText, one.categoryId, one.brandId], ["99999999999999999999", "7", "8"])
      const two = Option.getOrThrow(yield* rm.product(tenant, "2"))
      assert.deepStrictEqual([two.price, two.priceText, two.categoryId, two.brandId], [150000, "150000", "9", "10"])
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("productDelete with a list of ids leaves one tombstone per id, without the delivery's token", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        syncPage(BIZ, "product", [{ id: 1, name: "A" }, { id: 2, name: "B" }, { id: 3, name: "C" }]),
        webhook(BIZ, "productDelete", [1, BIG, 3])
      ])
      assert.deepStrictEqual((yield* rm.products(tenant)).items.map((p) => p.id), ["2"])
      const gone = (yield* rm.products(tenant, { includeDeleted: true })).items.filter((p) => p.deleted)
      assert.deepStrictEqual(gone.map((p) => p.id), ["1", "3", BIG.toString()])
      assert.deepStrictEqual(gone[0]!.record, [1, BIG, 3])
      const counts = yield* rm.counts(tenant)
      assert.strictEqual(counts.deletedProducts, 3)
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
        // A flat v2 order is still read: id, and the deprecated alias of appOrderId.
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
        products: 2, deletedProducts: 0, inventory: 0, orders: 1, deletedOrders: 0, bills: 0, deletedBills: 0,
        customers: 0, depots: 0, categories: 0, brands: 0, payments: 2, documents: 2, unknownEvents: 2
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
})
