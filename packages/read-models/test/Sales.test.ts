import { assert, describe, it } from "@effect/vitest"
import { ReadModels } from "@ocs/read-models"
import { Effect, Option } from "effect"
import { BIZ, appendAndProject, bill, files, layer, order, seconds, syncPage, tenant, webhook } from "./helpers.ts"

const BIG = 9007199254740993123n
const ORDER_PAGE = { idField: "info.id", updatedAtField: "info.updatedAt" } as const

const orderOf = (id: string) =>
  Effect.flatMap(ReadModels.ReadModels, (rm) => Effect.map(rm.order(tenant, id), Option.getOrThrow))

describe("orders, nested as the API nests them", () => {
  it.live("a webhook order: id, status, channel, depot, customer and total are columns; its lines are rows", () => {
    const f = files()
    return Effect.gen(function*() {
      yield* appendAndProject([
        webhook(BIZ, "orderAdd", order(BIG, {
          status: 54, saleChannel: 42, depotId: 3, appOrderId: "shop-7", type: 1,
          customer: { id: 77, name: "Trần B", mobile: "0900000001" },
          createdAt: seconds("2024-05-01T10:00:00Z"), updatedAt: seconds("2024-05-01T10:05:00Z"),
          lines: [{ productId: BIG + 1n, quantity: 2, price: 150000, discount: 10000 }, { productId: 5, quantity: 1, price: 99000 }]
        }))
      ])
      const o = yield* orderOf(BIG.toString())
      assert.deepStrictEqual(
        [o.id, o.appOrderId, o.type, o.status, o.saleChannel, o.depotId, o.customerId, o.customerName, o.customerMobile, o.lineCount],
        [BIG.toString(), "shop-7", "1", "54", "42", "3", "77", "Trần B", "0900000001", 2]
      )
      // orderSummary's total: price x quantity - discount per line.
      assert.strictEqual(o.total, 150000 * 2 - 10000 + 99000)
      assert.strictEqual(o.totalText, "389000")
      assert.strictEqual(o.createdAtMs, Date.UTC(2024, 4, 1, 10))
      assert.strictEqual(o.updatedAtMs, Date.UTC(2024, 4, 1, 10, 5))
      assert.deepStrictEqual(o.items.map((i) => [i.line, i.productId, i.quantity, i.price, i.discount, i.total]), [
        [0, (BIG + 1n).toString(), 2, 150000, 10000, 290000],
        [1, "5", 1, 99000, 0, 99000]
      ])
      assert.strictEqual((o.items[0]!.record as Record<string, unknown>)["productId"], BIG + 1n)
      assert.strictEqual(((o.record as Record<string, unknown>)["carrier"] as Record<string, unknown>)["name"], "GHN")
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("filters: status, sale channel, depot, mobile, created and updated ranges, appOrderId; keyset pages", () => {
    const f = files()
    const at = (day: number) => seconds(`2024-05-${String(day).padStart(2, "0")}T00:00:00Z`)
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        syncPage(BIZ, "order", [
          order(1, { status: 54, saleChannel: 1, depotId: 1, createdAt: at(1), updatedAt: at(2), customer: { mobile: "0901" }, appOrderId: "a1" }),
          order(2, { status: 60, saleChannel: 42, depotId: 1, createdAt: at(3), updatedAt: at(4), customer: { mobile: "0902" } }),
          order(3, { status: 60, saleChannel: 42, depotId: 2, createdAt: at(5), updatedAt: at(6), customer: { mobile: "0901" } }),
          order(4, { status: 63, saleChannel: 48, depotId: 2, createdAt: at(7), updatedAt: at(8) })
        ], ORDER_PAGE)
      ])
      const ids = (q: Parameters<typeof rm.orders>[1]) => Effect.map(rm.orders(tenant, q), (p) => p.items.map((o) => o.id))
      assert.deepStrictEqual(yield* ids({ status: "60" }), ["2", "3"])
      assert.deepStrictEqual(yield* ids({ saleChannel: "42", depotId: "2" }), ["3"])
      assert.deepStrictEqual(yield* ids({ customerMobile: "0901" }), ["1", "3"])
      assert.deepStrictEqual(yield* ids({ createdFromMs: at(3) * 1000, createdToMs: at(5) * 1000 }), ["2", "3"])
      assert.deepStrictEqual(yield* ids({ updatedFromMs: at(6) * 1000 }), ["3", "4"])
      assert.deepStrictEqual(yield* ids({ appOrderId: "a1" }), ["1"])
      const first = yield* rm.orders(tenant, { limit: 3 })
      assert.strictEqual(first.next, "3")
      assert.deepStrictEqual((yield* rm.orders(tenant, { limit: 3, after: first.next })).items.map((o) => o.id), ["4"])
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("lines are replaced with the order, and a stale version neither replaces the order nor its lines", () => {
    const f = files()
    return Effect.gen(function*() {
      yield* appendAndProject([
        webhook(BIZ, "orderAdd", order(1, { updatedAt: 100, lines: [{ productId: 1, quantity: 1, price: 10 }, { productId: 2, quantity: 1, price: 20 }, { productId: 3, quantity: 1, price: 30 }] })),
        webhook(BIZ, "orderUpdate", order(1, { status: 60, updatedAt: 200, lines: [{ productId: 9, quantity: 4, price: 5 }] })),
        // A page fetched before the update, appended after it: older, it loses, lines included.
        syncPage(BIZ, "order", [order(1, { updatedAt: 100, lines: [{ productId: 7, quantity: 1, price: 1 }, { productId: 8, quantity: 1, price: 1 }] })], ORDER_PAGE)
      ])
      const o = yield* orderOf("1")
      assert.strictEqual(o.status, "60")
      assert.deepStrictEqual(o.items.map((i) => [i.line, i.productId, i.quantity]), [[0, "9", 4]])
      assert.strictEqual(o.lineCount, o.items.length)
      // Within one batch too: the newer version arrives first, the older after it.
      yield* appendAndProject([
        webhook(BIZ, "orderUpdate", order(2, { updatedAt: 300, lines: [{ productId: 1, quantity: 1, price: 1 }] })),
        webhook(BIZ, "orderUpdate", order(2, { updatedAt: 250, lines: [{ productId: 2, quantity: 1, price: 1 }, { productId: 3, quantity: 1, price: 1 }] }))
      ])
      assert.deepStrictEqual((yield* orderOf("2")).items.map((i) => i.productId), ["1"])
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("orderDelete with a list of ids: tombstones without lines; a stale page does not resurrect, a newer one does", () => {
    const f = files()
    const deletedAt = Date.UTC(2024, 0, 2)
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        webhook(BIZ, "orderAdd", order(1, { updatedAt: seconds("2024-01-01T00:00:00Z"), lines: [{ productId: 1, quantity: 1, price: 1 }] })),
        webhook(BIZ, "orderAdd", order(2, { updatedAt: seconds("2024-01-01T00:00:00Z") })),
        webhook(BIZ, "orderAdd", order(3)),
        webhook(BIZ, "orderDelete", [1, 2], deletedAt),
        syncPage(BIZ, "order", [order(1, { updatedAt: seconds("2024-01-01T00:00:00Z"), lines: [{ productId: 5, quantity: 1, price: 1 }] })], ORDER_PAGE)
      ])
      assert.deepStrictEqual((yield* rm.orders(tenant)).items.map((o) => o.id), ["3"])
      const one = yield* orderOf("1")
      assert.isTrue(one.deleted)
      assert.isNull(one.status)
      assert.deepStrictEqual(one.items, [])
      assert.strictEqual(one.updatedAtMs, deletedAt)
      assert.deepStrictEqual((yield* rm.counts(tenant)).deletedOrders, 2)
      yield* appendAndProject([syncPage(BIZ, "order", [order(1, { status: 57, updatedAt: seconds("2024-01-03T00:00:00Z"), lines: [{ productId: 6, quantity: 1, price: 1 }] })], ORDER_PAGE)])
      const back = yield* orderOf("1")
      assert.isFalse(back.deleted)
      assert.deepStrictEqual(back.items.map((i) => i.productId), ["6"])
    }).pipe(Effect.provide(layer(f)))
  })

  it.live("an order/deleted record is a tombstone at its deletion time", () => {
    const f = files()
    return Effect.gen(function*() {
      yield* appendAndProject([
        webhook(BIZ, "orderAdd", order(4, { updatedAt: seconds("2024-01-01T00:00:00Z"), lines: [{ productId: 1, quantity: 1, price: 1 }] })),
        syncPage(BIZ, "order.deleted", [{ id: 4, createdAt: seconds("2024-01-05T00:00:00Z"), createdById: 3 }], { updatedAtField: "createdAt" })
      ])
      const gone = yield* orderOf("4")
      assert.isTrue(gone.deleted)
      assert.strictEqual(gone.updatedAtMs, Date.UTC(2024, 0, 5))
      assert.deepStrictEqual(gone.items, [])
    }).pipe(Effect.provide(layer(f)))
  })
})

describe("bills", () => {
  it.live("bills with their lines, filters by type, depot, customer and date; later pages replace lines", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        syncPage(BIZ, "bill", [
          bill(1, { date: "2024-05-01", type: 2, mode: 2, depotId: 1, customer: { id: 9, name: "Lan", mobile: "0909" }, amount: 300, lines: [{ id: 11, quantity: 2, price: 100 }, { id: 12, quantity: 1, price: 100 }] }),
          bill(2, { date: "2024-05-10", type: 1, mode: 5, depotId: 2, amount: 50 }),
          bill(3, { date: "2024-05-20", type: 2, mode: 6, depotId: 1, customer: { id: 9 }, orderId: 44 })
        ])
      ])
      const b = Option.getOrThrow(yield* rm.bill(tenant, "1"))
      assert.deepStrictEqual([b.date, b.type, b.mode, b.depotId, b.customerId, b.customerName, b.customerMobile, b.amount], ["2024-05-01", "2", "2", "1", "9", "Lan", "0909", 300])
      assert.strictEqual(b.createdAtMs, Date.UTC(2024, 4, 1, 3))
      assert.deepStrictEqual(b.items.map((i) => [i.line, i.productId, i.quantity, i.price, i.amount]), [[0, "11", 2, 100, 200], [1, "12", 1, 100, 100]])
      const ids = (q: Parameters<typeof rm.bills>[1]) => Effect.map(rm.bills(tenant, q), (p) => p.items.map((x) => x.id))
      assert.deepStrictEqual(yield* ids({ type: "2" }), ["1", "3"])
      assert.deepStrictEqual(yield* ids({ depotId: "2" }), ["2"])
      assert.deepStrictEqual(yield* ids({ customerId: "9", fromDate: "2024-05-02" }), ["3"])
      assert.deepStrictEqual(yield* ids({ fromDate: "2024-05-01", toDate: "2024-05-10" }), ["1", "2"])
      assert.strictEqual(Option.getOrThrow(yield* rm.bill(tenant, "3")).orderId, "44")
      // No updated time on bills: the later page is the later truth, lines with it.
      yield* appendAndProject([syncPage(BIZ, "bill", [bill(1, { date: "2024-05-01", amount: 100, lines: [{ id: 13, quantity: 1, price: 100 }] })])])
      assert.deepStrictEqual(Option.getOrThrow(yield* rm.bill(tenant, "1")).items.map((i) => i.productId), ["13"])
      // A bill/deleted record leaves a tombstone without lines.
      yield* appendAndProject([syncPage(BIZ, "bill.deleted", [{ id: 1, createdAt: seconds("2024-06-01T00:00:00Z") }])])
      const gone = Option.getOrThrow(yield* rm.bill(tenant, "1"))
      assert.isTrue(gone.deleted)
      assert.deepStrictEqual(gone.items, [])
      assert.deepStrictEqual(yield* ids({}), ["2", "3"])
      assert.deepStrictEqual((yield* rm.counts(tenant)).deletedBills, 1)
    }).pipe(Effect.provide(layer(f)))
  })
})
