import { assert, describe, it } from "@effect/vitest"
import { ReadModels } from "@ocs/read-models"
import { Effect, Option } from "effect"
import { BIZ, appendAndProject, files, layer, seconds, stockItem, syncPage, tenant, webhook } from "./helpers.ts"

const BIG = 9007199254740993123n

describe("stock per product and depot", () => {
  it.live("from an inventoryChange webhook and a product/inventory pull, per depot; totals when no depot is named", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        // v3: an array of items, each with its depots; the product is named `id`.
        webhook(BIZ, "inventoryChange", [
          stockItem(BIG, [[1, 5, 4], [2, 7.25]], "id"),
          { id: 2, remain: 99999999999999999999n, available: 3 }
        ])
      ])
      const rows = yield* rm.inventory(tenant)
      assert.deepStrictEqual(rows.map((r) => [r.productId, r.depotId, r.remainText, r.available, r.lastSource]), [
        ["2", "", "99999999999999999999", 3, "webhook"],
        [BIG.toString(), "1", "5", 4, "webhook"],
        [BIG.toString(), "2", "7.25", 7.25, "webhook"]
      ])
      // A pull (product/inventory, id field productId) overwrites the levels it names.
      yield* appendAndProject([syncPage(BIZ, "inventory", [stockItem(BIG, [[2, 0, 0], [3, 12, 10]])], { idField: "productId" })])
      assert.deepStrictEqual((yield* rm.inventory(tenant, { productId: BIG.toString() })).map((r) => [r.depotId, r.remain, r.lastSource]), [
        ["1", 5, "webhook"],
        ["2", 0, "sync"],
        ["3", 12, "sync"]
      ])
      assert.deepStrictEqual((yield* rm.inventory(tenant, { depotId: "3" })).map((r) => r.productId), [BIG.toString()])
      assert.deepStrictEqual((yield* rm.inventory(tenant, { depotId: "" })).map((r) => r.productId), ["2"])
      const depotEntry = (yield* rm.inventory(tenant, { productId: BIG.toString(), depotId: "3" }))[0]!.record as Record<string, unknown>
      assert.deepStrictEqual(depotEntry, { id: 3, remain: 12, available: 10, shipping: 0 })
      // v2 sent an object keyed by product id: still read.
      yield* appendAndProject([webhook(BIZ, "inventoryChange", { "8": { remain: 1, depots: [{ id: 1, remain: 1, available: 0 }] } })])
      assert.deepStrictEqual((yield* rm.inventory(tenant, { productId: "8" })).map((r) => [r.depotId, r.remain, r.available]), [["1", 1, 0]])
    }).pipe(Effect.provide(layer(f)))
  })
})

describe("customers, depots, categories, brands", () => {
  it.live("customers: columns from the record, search, mobile, newer updatedAt wins", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        syncPage(BIZ, "customer", [
          { id: 1, type: 1, code: "KH1", name: "Nguyễn Lan", mobile: "0901", email: "lan@example.com", points: 12, totalAmount: 12345678901234567890n, level: { id: 2, name: "Gold" }, group: { id: 5 }, updatedAt: seconds("2024-02-01T00:00:00Z"), vendorExtra: 1 },
          { id: 2, type: 2, name: "Công ty Minh", mobile: "0902", updatedAt: seconds("2024-02-01T00:00:00Z") },
          { id: 3, name: "Trà 100%", mobile: "0903" }
        ])
      ])
      const lan = Option.getOrThrow(yield* rm.customer(tenant, "1"))
      assert.deepStrictEqual(
        [lan.type, lan.code, lan.name, lan.mobile, lan.email, lan.points, lan.totalAmountText, lan.level, lan.group, lan.updatedAtMs],
        ["1", "KH1", "Nguyễn Lan", "0901", "lan@example.com", 12, "12345678901234567890", "Gold", "5", Date.UTC(2024, 1, 1)]
      )
      assert.strictEqual((lan.record as Record<string, unknown>)["vendorExtra"], 1)
      assert.deepStrictEqual((yield* rm.customers(tenant, { mobile: "0902" })).items.map((c) => c.id), ["2"])
      assert.deepStrictEqual((yield* rm.customers(tenant, { search: "KH" })).items.map((c) => c.id), ["1"])
      assert.deepStrictEqual((yield* rm.customers(tenant, { search: "100%" })).items.map((c) => c.id), ["3"])
      const first = yield* rm.customers(tenant, { limit: 2 })
      assert.deepStrictEqual((yield* rm.customers(tenant, { limit: 2, after: first.next })).items.map((c) => c.id), ["3"])
      // An older observation after a newer one does not win.
      yield* appendAndProject([syncPage(BIZ, "customer", [{ id: 2, name: "stale", updatedAt: seconds("2024-01-01T00:00:00Z") }])])
      assert.strictEqual(Option.getOrThrow(yield* rm.customer(tenant, "2")).name, "Công ty Minh")
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("depots, categories and brands: whole lists; the later observation wins (no updated time)", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        syncPage(BIZ, "depot", [
          { id: 1, code: "K1", name: "Kho 1", mobile: "028", location: { cityName: "HCM", address: "1 Lê Lợi" } },
          { id: 2, name: "Kho 2", locationV2: { cityName: "HN", address: "2 Tràng Tiền" } }
        ]),
        syncPage(BIZ, "category", [{ id: 10, parentId: 0, code: "DR", name: "Đồ uống", status: 1 }, { id: 11, parentId: 10, name: "Trà", status: 2 }]),
        syncPage(BIZ, "brand", [{ id: 20, name: "Phúc Long", status: 1, createdAt: 1714557600 }])
      ])
      assert.deepStrictEqual((yield* rm.depots(tenant)).map((d) => [d.id, d.code, d.name, d.mobile, d.address]), [
        ["1", "K1", "Kho 1", "028", "1 Lê Lợi"],
        ["2", null, "Kho 2", null, "2 Tràng Tiền"]
      ])
      assert.deepStrictEqual((yield* rm.categories(tenant)).map((c) => [c.id, c.parentId, c.code, c.name, c.status]), [
        ["10", null, "DR", "Đồ uống", "1"],
        ["11", "10", null, "Trà", "2"]
      ])
      assert.deepStrictEqual((yield* rm.brands(tenant)).map((b) => [b.id, b.name, b.status]), [["20", "Phúc Long", "1"]])
      yield* appendAndProject([
        syncPage(BIZ, "depot", [{ id: 2, name: "Kho 2 (mới)" }]),
        syncPage(BIZ, "brand", [{ id: 20, name: "Phúc Long", status: 2 }])
      ])
      assert.strictEqual((yield* rm.depots(tenant))[1]!.name, "Kho 2 (mới)")
      assert.strictEqual((yield* rm.brands(tenant))[0]!.status, "2")
      const counts = yield* rm.counts(tenant)
      assert.deepStrictEqual([counts.depots, counts.categories, counts.brands], [2, 2, 1])
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("appUninstalled changes no table; records without ids are kept as unknown events", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([syncPage(BIZ, "depot", [{ id: 1, name: "Kho 1" }])])
      const before = yield* rm.digest(tenant)
      const stats = yield* appendAndProject([webhook(BIZ, "appUninstalled", undefined)])
      assert.strictEqual(stats.events, 1)
      assert.deepStrictEqual(yield* rm.digest(tenant), before)
      yield* appendAndProject([syncPage(BIZ, "customer", [{ name: "no id" }]), syncPage(BIZ, "bill", [{ date: "2024-01-01" }])])
      const reasons = (yield* rm.unknownEvents(tenant)).items.map((u) => u.reason).sort()
      assert.deepStrictEqual(reasons, ["BillObserved: bill without id", "CustomerObserved: customer without id"])
    }).pipe(Effect.provide(layer(f)))
  })
})
