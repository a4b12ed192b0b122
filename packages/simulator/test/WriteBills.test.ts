import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { RunningSimulator } from "../src/index.ts"
import { call, type Caller, eventually, receiver, start } from "./helpers.ts"

describe("bill/addretail and the stock movements", () => {
  let sim: RunningSimulator
  let demo: Caller
  let productIds: Array<string>
  beforeAll(async () => {
    sim = await start({ products: 150, seed: 9 })
    demo = sim.demo!
    productIds = (await call(sim, demo, "product/list", { paginator: { size: 100 } })).json.data.map((p: any) => String(p.id))
  })
  afterAll(() => sim.close())

  const stock = async (productId: string, depotId: number): Promise<number> => {
    const row = (await call(sim, demo, "product/inventory", { filters: { ids: [Number(productId)], depotIds: [depotId] } })).json.data[0]
    return row.inventory.depots.find((d: any) => d.id === depotId).remain
  }
  const billById = async (id: string) =>
    (await call(sim, demo, "bill/list", { filters: { ids: [Number(id)] } })).json.data[0]

  it("a retail bill of 100 lines: listed with its marker, stock taken from the depot, inventoryChange sent", async () => {
    const hook = await receiver()
    try {
      await sim.control.enableWebhooks(demo.appId, { callbackUrl: hook.url, verifyToken: "v" })
      const before = await stock(productIds[0]!, 2)
      const lines = productIds.map((id, i) => ({ id, quantity: 1 + (i % 2), price: 100, ...(i === 0 ? { discount: { type: "percent", value: 10 } } : {}) }))
      const sold = await call(sim, demo, "bill/addretail", { depotId: 2, description: "sale [m:R-1]", products: lines, customer: { name: "Lan", mobile: "0912000001" } })
      assert.strictEqual(sold.json.code, 1, sold.text)
      const expected = lines.reduce((sum, l, i) => sum + l.quantity * (100 - (i === 0 ? 10 : 0)), 0)
      assert.strictEqual(sold.json.data.totalAmount, expected)
      const bill = await billById(String(sold.json.data.id))
      assert.strictEqual(bill.description, "sale [m:R-1]")
      assert.strictEqual(bill.type, 2)
      assert.strictEqual(bill.mode, 2)
      assert.strictEqual(bill.products.length, 100)
      assert.strictEqual(await stock(productIds[0]!, 2), before - 1)
      const counts = await sim.control.countEffects(demo.businessId, { kind: "bill.addRetail", markers: ["[m:R-1]", "[m:R-2]"] })
      assert.deepStrictEqual(counts.markers, { "[m:R-1]": 1, "[m:R-2]": 0 })
      const change = await eventually(async () => hook.received.find((r) => r.json?.event === "inventoryChange"))
      assert.strictEqual(change.json.data.length, 100)
    } finally {
      await sim.control.disableWebhooks(demo.appId)
      await hook.close()
    }
  })

  it("the four movements: paths, type and mode, stock in and out", async () => {
    const productId = productIds[5]!
    const cases = [
      { path: "inventory/importsupplier", kind: "inventory.importSupplier", body: { supplierId: 7 }, type: 1, mode: 5, delta: 4 },
      { path: "inventory/exportsupplier", kind: "inventory.exportSupplier", body: { supplierId: 7 }, type: 2, mode: 5, delta: -4 },
      { path: "inventory/importother", kind: "inventory.importOther", body: { customer: { name: "Shop B" } }, type: 1, mode: 10, delta: 4 },
      { path: "inventory/exportother", kind: "inventory.exportOther", body: {}, type: 2, mode: 10, delta: -4 }
    ] as const
    for (const c of cases) {
      const before = await stock(productId, 1)
      const marker = `[m:${c.kind}]`
      const moved = await call(sim, demo, c.path, { depotId: 1, description: `move ${marker}`, products: [{ id: productId, quantity: 4 }], ...c.body })
      assert.strictEqual(moved.json.code, 1, `${c.path}: ${moved.text}`)
      assert.isAbove(moved.json.data.totalAmount, 0)
      const bill = await billById(String(moved.json.data.id))
      assert.strictEqual(bill.type, c.type, c.path)
      assert.strictEqual(bill.mode, c.mode, c.path)
      assert.strictEqual(await stock(productId, 1), before + c.delta, c.path)
      const counts = await sim.control.countEffects(demo.businessId, { kind: c.kind, markers: [marker] })
      assert.strictEqual(counts.markers[marker], 1)
    }
  })

  it("names each bad field and stores nothing", async () => {
    const supplier = await call(sim, demo, "inventory/importsupplier", { depotId: 1, products: [{ id: productIds[0], quantity: 1 }] })
    assert.deepStrictEqual(Object.keys(supplier.json.messages), ["supplierId"])
    const bad = await call(sim, demo, "bill/addretail", {
      depotId: "one",
      customer: { id: "99999999" },
      products: [{ id: productIds[0] }, { quantity: 1 }, { id: "123", quantity: -1 }, { id: productIds[1], quantity: 1, discount: { type: "gift", value: 1 } }]
    })
    assert.deepStrictEqual(Object.keys(bad.json.messages).sort(), [
      "customer.id",
      "depotId",
      "products.0.quantity",
      "products.1.id",
      "products.2.id",
      "products.2.quantity",
      "products.3.discount.type"
    ])
    const empty = await call(sim, demo, "bill/addretail", { depotId: 1, products: [] })
    assert.strictEqual(empty.json.messages["products"], "must not be empty")
    const over = await call(sim, demo, "inventory/importother", { depotId: 1, products: productIds.concat(productIds[0]!).map((id) => ({ id, quantity: 1 })) })
    assert.strictEqual(over.json.messages["products"], "at most 100 items")
    const effects = await sim.control.effects(demo.businessId, "inventory.importSupplier")
    assert.strictEqual(effects.effects.length, 1, "only the valid movement of the previous test")
  })

  it("refuses a depot the token was not granted (ERR_INVALID_DEPOT_ID) and a token without the permission (ERR_403)", async () => {
    const t = await sim.control.createTenant({ products: 20, depots: [1] })
    const who = { appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken }
    const refused = await call(sim, who, "inventory/importother", { depotId: 2, products: [{ id: productIds[0], quantity: 1 }] })
    assert.strictEqual(refused.json.errorCode, "ERR_INVALID_DEPOT_ID")
    assert.strictEqual((await sim.control.countEffects(who.businessId, { kind: "inventory.importOther" })).total, 0)
    const noPermission = await sim.control.createTenant({ products: 20, permissions: ["product"] })
    const limited = { appId: noPermission.app.appId, businessId: noPermission.business.businessId, accessToken: noPermission.token.accessToken }
    assert.strictEqual((await call(sim, limited, "bill/addretail", { depotId: 1, products: [{ id: productIds[0], quantity: 1 }] })).json.errorCode, "ERR_403")
  })
})
