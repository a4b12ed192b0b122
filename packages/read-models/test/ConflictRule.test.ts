import { assert, describe, it } from "@effect/vitest"
import { ReadModels } from "@ocs/read-models"
import { Effect, Option } from "effect"
import { BIZ, appendAndProject, files, layer, order, stockItem, syncPage, tenant, webhook } from "./helpers.ts"

const T1 = "2024-01-01T00:00:00Z"
const T2 = "2024-01-02T00:00:00Z"
const T3 = "2024-01-03T00:00:00Z"

const product = (id: string) =>
  Effect.gen(function*() {
    const rm = yield* ReadModels.ReadModels
    return Option.getOrThrow(yield* rm.product(tenant, id))
  })

describe("conflict rule: newer updatedAt wins, else log order; deletes are tombstones", () => {
  it.live("an older sync observation arriving after a newer webhook does not win", () => {
    const f = files()
    return Effect.gen(function*() {
      yield* appendAndProject([webhook(BIZ, "productUpdate", { id: 1, name: "from webhook", updatedAt: T2 })])
      yield* appendAndProject([syncPage(BIZ, "product", [{ id: 1, name: "stale page", updatedAt: T1 }])])
      const p = yield* product("1")
      assert.strictEqual(p.name, "from webhook")
      assert.strictEqual(p.lastSource, "webhook")
      // A newer observation does win, whichever source it comes from.
      yield* appendAndProject([syncPage(BIZ, "product", [{ id: 1, name: "newer page", updatedAt: T3 }])])
      assert.strictEqual((yield* product("1")).name, "newer page")
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("an older update after a newer one does not win, also within one batch", () => {
    const f = files()
    return Effect.gen(function*() {
      yield* appendAndProject([
        webhook(BIZ, "productUpdate", { id: 2, name: "newer", updatedAt: T2 }),
        webhook(BIZ, "productUpdate", { id: 2, name: "older, delivered late", updatedAt: T1 })
      ])
      assert.strictEqual((yield* product("2")).name, "newer")
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("equal or absent updatedAt: the later log position wins", () => {
    const f = files()
    return Effect.gen(function*() {
      yield* appendAndProject([
        webhook(BIZ, "productUpdate", { id: 3, name: "first", updatedAt: T2 }),
        syncPage(BIZ, "product", [{ id: 3, name: "same time, later in log", updatedAt: "2024-01-02 00:00:00" }]),
        syncPage(BIZ, "product", [{ id: 4, name: "page", updatedAt: T3 }]),
        webhook(BIZ, "productUpdate", { id: 4, name: "webhook without updatedAt" }),
        webhook(BIZ, "productUpdate", { id: 5, name: "webhook without updatedAt" }),
        syncPage(BIZ, "product", [{ id: 5, name: "page with unparseable updatedAt", updatedAt: "yesterday" }])
      ])
      assert.strictEqual((yield* product("3")).name, "same time, later in log")
      assert.strictEqual((yield* product("4")).name, "webhook without updatedAt")
      assert.strictEqual((yield* product("5")).name, "page with unparseable updatedAt")
      assert.strictEqual((yield* product("5")).updatedAt, "yesterday")
      assert.isNull((yield* product("5")).updatedAtMs)
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("a sync observation older than the delete does not resurrect the product; a newer one does", () => {
    const f = files()
    const deletedAt = Date.UTC(2024, 0, 2)
    return Effect.gen(function*() {
      yield* appendAndProject([
        syncPage(BIZ, "product", [{ id: 6, name: "alive", updatedAt: T1 }]),
        webhook(BIZ, "productDelete", { id: 6 }, deletedAt),
        // A page fetched before the delete, appended after it.
        syncPage(BIZ, "product", [{ id: 6, name: "stale page", updatedAt: T1 }])
      ])
      const gone = yield* product("6")
      assert.isTrue(gone.deleted)
      assert.strictEqual(gone.updatedAtMs, deletedAt)
      const rm = yield* ReadModels.ReadModels
      assert.strictEqual((yield* rm.products(tenant)).items.length, 0)
      yield* appendAndProject([syncPage(BIZ, "product", [{ id: 6, name: "re-created", updatedAt: T3 }])])
      const back = yield* product("6")
      assert.isFalse(back.deleted)
      assert.strictEqual(back.name, "re-created")
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("order tombstones, stock levels and customers follow the same rule; unversioned tables follow the log", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        webhook(BIZ, "orderAdd", order(10, { status: 54, updatedAt: T1, lines: [{ productId: 1, quantity: 1, price: 1 }] })),
        webhook(BIZ, "orderDelete", [10], Date.UTC(2024, 0, 2)),
        syncPage(BIZ, "order", [order(10, { status: 60, updatedAt: T1 })], { idField: "info.id", updatedAtField: "info.updatedAt" }),
        webhook(BIZ, "inventoryChange", [{ ...stockItem(1, [[1, 5]], "id"), updatedAt: T2 }]),
        syncPage(BIZ, "inventory", [{ ...stockItem(1, [[1, 9]]), updatedAt: T1 }], { idField: "productId" }),
        syncPage(BIZ, "customer", [{ id: 1, name: "newer", updatedAt: T2 }]),
        syncPage(BIZ, "customer", [{ id: 1, name: "older", updatedAt: T1 }]),
        syncPage(BIZ, "category", [{ id: 1, name: "first" }]),
        syncPage(BIZ, "category", [{ id: 1, name: "second" }, { id: 1, name: "third, later in the same page" }])
      ])
      const o = Option.getOrThrow(yield* rm.order(tenant, "10"))
      assert.isTrue(o.deleted)
      assert.deepStrictEqual(o.items, [])
      assert.deepStrictEqual((yield* rm.inventory(tenant, { productId: "1" })).map((r) => r.remain), [5])
      assert.strictEqual(Option.getOrThrow(yield* rm.customer(tenant, "1")).name, "newer")
      assert.strictEqual((yield* rm.categories(tenant))[0]!.name, "third, later in the same page")
    }).pipe(Effect.provide(layer(f)))
  })
})
