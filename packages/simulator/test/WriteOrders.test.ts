import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { RunningSimulator } from "../src/index.ts"
import { call, type Caller, eventually, receiver, start } from "./helpers.ts"

describe("order/add and order/edit", () => {
  let sim: RunningSimulator
  let demo: Caller
  let productIds: Array<string>
  const order = (appOrderId: string, extra: Record<string, unknown> = {}) => ({
    info: { depotId: 1, description: "first" },
    channel: { appOrderId },
    shippingAddress: { name: "Lan", mobile: "0912000001", address: "1 Hang Bac" },
    products: [{ id: productIds[0], price: 1000, quantity: 2, discount: 100 }],
    ...extra
  })
  const listed = async (who: Caller, id: string) =>
    (await call(sim, who, "order/list", { filters: { ids: [Number(id)] } })).json.data[0]
  const edit = (body: unknown) => call(sim, demo, "order/edit", body)

  beforeAll(async () => {
    sim = await start({ products: 200, seed: 5 })
    demo = sim.demo!
    productIds = (await call(sim, demo, "product/list", { paginator: { size: 100 } })).json.data.map((p: any) => String(p.id))
  })
  afterAll(() => sim.close())

  it("adds an order that order/list and the orderAdd webhook show, with 100 lines", async () => {
    const hook = await receiver()
    try {
      const t = await sim.control.createTenant({ products: 200, seed: 5 })
      const who = { appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken }
      await sim.control.enableWebhooks(t.app.appId, { callbackUrl: hook.url, verifyToken: "v" })
      const lines = productIds.map((id, i) => ({ id, price: 1000 + i, quantity: 1 + (i % 3) }))
      assert.strictEqual(lines.length, 100)
      const added = await call(sim, who, "order/add", order("BIG-1", { products: lines, info: { status: 56, depotId: 2 } }))
      assert.strictEqual(added.json.code, 1, added.text)
      const id = String(added.json.data.id)
      assert.property(added.json.data, "trackingUrl")
      const row = await listed(who, id)
      assert.strictEqual(row.channel.appOrderId, "BIG-1")
      assert.strictEqual(row.info.status, 56)
      assert.strictEqual(row.info.depotId, 2)
      assert.strictEqual(row.products.length, 100)
      assert.strictEqual(row.shippingAddress.name, "Lan")
      const event = await eventually(async () => hook.received.find((r) => r.json?.event === "orderAdd"))
      assert.strictEqual(String(event.json.data.info.id), id)
    } finally {
      await hook.close()
    }
  })

  it("refuses each invalid field, naming it, and stores nothing", async () => {
    const bad = await call(sim, demo, "order/add", {
      info: { status: 60, depotId: "9" },
      channel: {},
      shippingAddress: { name: "" },
      products: [{ id: "999999999", price: -1, quantity: 0 }, { price: 1 }, "x"]
    })
    assert.strictEqual(bad.json.code, 0)
    assert.strictEqual(bad.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.deepStrictEqual(Object.keys(bad.json.messages).sort(), [
      "channel.appOrderId",
      "info.depotId",
      "info.status",
      "products.0.id",
      "products.0.price",
      "products.0.quantity",
      "products.1.id",
      "products.1.quantity",
      "products.2",
      "shippingAddress.mobile",
      "shippingAddress.name"
    ])
    const depot = await call(sim, demo, "order/add", order("DEPOT-9", { info: { depotId: 9 } }))
    assert.strictEqual(depot.json.errorCode, "ERR_INVALID_DEPOT_ID")
    const missing = await call(sim, demo, "order/add", { channel: { appOrderId: "X" } })
    assert.deepStrictEqual(Object.keys(missing.json.messages).sort(), ["products", "shippingAddress"])
    const tooMany = await call(sim, demo, "order/add", order("X", { products: Array.from({ length: 501 }, () => ({ id: productIds[0], price: 1, quantity: 1 })) }))
    assert.strictEqual(tooMany.json.messages["products"], "at most 500 items")
    const counts = await sim.control.countEffects(demo.businessId, { kind: "order.add" })
    assert.strictEqual(counts.total, 0)
  })

  it("refuses a second appOrderId from the same application, not from another one", async () => {
    const first = await call(sim, demo, "order/add", order("DUP-1"))
    assert.strictEqual(first.json.code, 1)
    const again = await call(sim, demo, "order/add", order("DUP-1"))
    assert.strictEqual(again.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.match(again.json.messages["channel.appOrderId"], /already exists/)
    assert.notProperty(again.json, "data", "the refusal does not name the existing order")
    const otherApp = await sim.control.createApp()
    const token = await sim.control.createToken({ appId: otherApp.appId, businessId: demo.businessId })
    const other = { appId: otherApp.appId, businessId: demo.businessId, accessToken: token.accessToken }
    assert.strictEqual((await call(sim, other, "order/add", order("DUP-1"))).json.code, 1)
    const counts = await sim.control.countEffects(demo.businessId, { kind: "order.add", keys: ["DUP-1"] })
    assert.strictEqual(counts.keys["DUP-1"], 2)
  })

  it("order/edit changes only the fields sent, and clears a field sent empty", async () => {
    const id = String((await call(sim, demo, "order/add", order("EDIT-1", { info: { description: "keep me", privateDescription: "secret" } }))).json.data.id)
    const changed = await edit({ info: { id, privateDescription: "" }, shippingAddress: { address: "" }, payment: { transferAmount: 500 } })
    assert.strictEqual(changed.json.code, 1, changed.text)
    assert.strictEqual(String(changed.json.data.id), id)
    const row = await listed(demo, id)
    assert.strictEqual(row.info.description, "keep me", "not sent: unchanged")
    assert.strictEqual(row.info.privateDescription, "", "sent empty: cleared")
    assert.strictEqual(row.shippingAddress.address, "")
    assert.strictEqual(row.shippingAddress.name, "Lan")
    assert.strictEqual(row.payment.transfer.amount, 500)
    assert.isAbove(row.info.updatedAt, row.info.createdAt)
    const clearName = await edit({ info: { id }, shippingAddress: { name: "" } })
    assert.strictEqual(clearName.json.messages["shippingAddress.name"], "must not be empty")
  })

  it("order/edit cannot change products", async () => {
    const id = String((await call(sim, demo, "order/add", order("EDIT-2"))).json.data.id)
    const refused = await edit({ info: { id }, products: [{ id: productIds[1], price: 1, quantity: 1 }] })
    assert.strictEqual(refused.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.property(refused.json.messages, "products")
    assert.strictEqual((await listed(demo, id)).products[0].productId, Number(productIds[0]))
  })

  it("order/edit refuses orders handed to a carrier or finished, naming info.id", async () => {
    for (const status of [59, 61, 71, 60, 72]) {
      const placed = await sim.control.addOrder(demo.businessId, { status })
      const id = String((placed.order as any).info.id)
      const refused = await edit({ info: { id, description: "late" } })
      assert.strictEqual(refused.json.errorCode, "ERR_INVALID_FORM_FIELDS", `status ${status}`)
      assert.match(refused.json.messages["info.id"], /cannot be edited/)
      assert.strictEqual((await listed(demo, id)).info.description, "")
    }
    const unknown = await edit({ info: { id: "1" } })
    assert.match(unknown.json.messages["info.id"], /no order/)
  })

  it("order/edit allows only some status moves", async () => {
    const id = String((await call(sim, demo, "order/add", order("EDIT-3"))).json.data.id)
    const forbidden = await edit({ info: { id, status: 59 } })
    assert.match(forbidden.json.messages["info.status"], /must be one of 56, 63, 64, 60, 72/)
    assert.strictEqual((await edit({ info: { id, status: 56 } })).json.code, 1)
    assert.strictEqual((await listed(demo, id)).info.status, 56)
    assert.strictEqual((await edit({ info: { id, status: 63 } })).json.code, 1)
    const revived = await edit({ info: { id, status: 56 } })
    assert.match(revived.json.messages["info.status"], /cancelled/)
    const done = String((await call(sim, demo, "order/add", order("EDIT-4"))).json.data.id)
    assert.strictEqual((await edit({ info: { id: done, status: 60 } })).json.code, 1)
    assert.match((await edit({ info: { id: done, status: 72 } })).json.messages["info.id"], /finished/)
  })

  it("an order with a depot holds its quantities there until it succeeds or is cancelled", async () => {
    const productId = productIds[7]!
    const level = async () => {
      const row = (await call(sim, demo, "product/inventory", { filters: { ids: [Number(productId)], depotIds: [3] } })).json.data[0]
      const d = row.inventory.depots.find((x: any) => x.id === 3)
      return { remain: d.remain as number, holding: d.holding as number }
    }
    const line = (appOrderId: string) => order(appOrderId, { info: { depotId: 3 }, products: [{ id: productId, price: 1000, quantity: 3 }] })
    const start0 = await level()
    const cancelled = String((await call(sim, demo, "order/add", line("HOLD-1"))).json.data.id)
    assert.deepStrictEqual(await level(), { remain: start0.remain, holding: start0.holding + 3 })
    assert.strictEqual((await edit({ info: { id: cancelled, status: 63 } })).json.code, 1)
    assert.deepStrictEqual(await level(), start0, "a cancellation releases what the order held")
    const sold = String((await call(sim, demo, "order/add", line("HOLD-2"))).json.data.id)
    assert.strictEqual((await edit({ info: { id: sold, status: 56 } })).json.code, 1)
    assert.deepStrictEqual(await level(), { remain: start0.remain, holding: start0.holding + 3 }, "confirming keeps it held")
    assert.strictEqual((await edit({ info: { id: sold, status: 60 } })).json.code, 1)
    assert.deepStrictEqual(await level(), { remain: start0.remain - 3, holding: start0.holding }, "success: the goods left the depot")
  })
})
