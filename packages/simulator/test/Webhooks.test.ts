import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { RunningSimulator } from "../src/index.ts"
import { call, eventually, receiver, start } from "./helpers.ts"

describe("webhooks", () => {
  let sim: RunningSimulator
  const receivers: Array<{ close: () => Promise<void> }> = []
  const hook = async (...args: Parameters<typeof receiver>) => {
    const r = await receiver(...args)
    receivers.push(r)
    return r
  }
  const tenant = async () => {
    const t = await sim.control.createTenant({ products: 20, orders: 5 })
    return { ...t, who: { appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken } }
  }
  const events = (r: { received: ReadonlyArray<{ json: any; body: string }> }, name: string) => r.received.filter((x) => x.json?.event === name)

  beforeAll(async () => {
    sim = await start({
      products: 20,
      webhooks: { timeoutMs: 200, retryDelaysMs: [5], degradation: { window: 8, minSamples: 100, below: 0.5 } }
    })
  })
  afterAll(async () => {
    await sim.close()
    await Promise.all(receivers.map((r) => r.close()))
  })

  it("enables only after a 200 to webhooksEnabled, which lists the chosen events", async () => {
    const t = await tenant()
    const failing = await hook(() => ({ status: 500 }))
    const refused = await sim.control.enableWebhooks(t.app.appId, { callbackUrl: failing.url, verifyToken: "v1" })
    assert.isFalse(refused.enabled)
    assert.strictEqual(refused.app.webhooks.status, "off")
    const ok = await hook()
    const res = await sim.control.enableWebhooks(t.app.appId, {
      callbackUrl: ok.url,
      verifyToken: "v1",
      events: ["productAdd", "productUpdate", "inventoryChange", "orderUpdate", "orderAdd"]
    })
    assert.isTrue(res.enabled)
    const body = ok.received[0]!.json
    assert.strictEqual(body.event, "webhooksEnabled")
    assert.strictEqual(body.webhooksVerifyToken, "v1")
    assert.notProperty(body, "businessId")
    assert.deepStrictEqual(body.data.registeredEvents, {
      "101": "productAdd",
      "102": "productUpdate",
      "110": "inventoryChange",
      "201": "orderAdd",
      "202": "orderUpdate"
    })
  })

  it("delivers data changes with the spec's envelope, only for chosen events", async () => {
    const t = await tenant()
    const r = await hook()
    await sim.control.enableWebhooks(t.app.appId, {
      callbackUrl: r.url,
      verifyToken: "secret",
      events: ["productAdd", "inventoryChange", "orderAdd"]
    })
    await call(sim, t.who, "product/add", [{ appProductId: "w1", name: "Hooked", price: 1 }])
    await sim.control.updateProduct(t.who.businessId, "100001", { name: "not chosen" })
    await sim.control.changeInventory(t.who.businessId, [
      { productId: "100002", depotId: 1, quantity: 5 },
      { productId: "100003", depotId: 2, quantity: 7 }
    ])
    await sim.control.addOrder(t.who.businessId, { customerName: "Ada", customerMobile: "0911", products: [{ productId: "100002", quantity: 2 }] })
    await sim.control.drainDeliveries()
    const add = events(r, "productAdd")[0]!
    assert.match(add.body, new RegExp(`^\\{"event":"productAdd","businessId":${t.who.businessId},"webhooksVerifyToken":"secret","data":\\{`))
    assert.strictEqual(add.json.data.appProductId, "w1")
    assert.strictEqual(events(r, "productUpdate").length, 0)
    // v3: inventoryChange is an array of items, each with every depot's stock
    const stock = events(r, "inventoryChange")[0]!.json.data
    assert.isArray(stock)
    assert.deepStrictEqual(stock.map((i: { id: number }) => i.id), [100002, 100003])
    assert.strictEqual(stock[0].depots.find((d: { id: number }) => d.id === 1).remain, 5)
    assert.strictEqual(stock[1].depots.find((d: { id: number }) => d.id === 2).remain, 7)
    // v3: the order nested as order/list writes it, status a numeric code (54 new)
    const order = events(r, "orderAdd")[0]!.json.data
    assert.strictEqual(order.shippingAddress.name, "Ada")
    assert.strictEqual(order.shippingAddress.mobile, "0911")
    assert.strictEqual(order.info.status, 54)
    assert.strictEqual(order.products.length, 1)
    assert.strictEqual(order.products[0].productId, 100002)
  })

  it("sends v3 deletions as arrays of ids and product changes as product objects", async () => {
    const t = await tenant()
    const r = await hook()
    await sim.control.enableWebhooks(t.app.appId, { callbackUrl: r.url })
    await sim.control.updateProduct(t.who.businessId, "100004", { price: 77000 })
    const gone = await sim.control.deleteProduct(t.who.businessId, "100004")
    assert.deepStrictEqual(gone.products, ["100004"])
    const order = await sim.control.addOrder(t.who.businessId, { products: [{ productId: "100005", quantity: 1 }] })
    const orderId = (order.order as { info: { id: string } }).info.id
    await sim.control.updateOrder(t.who.businessId, orderId, { status: 59 })
    await sim.control.deleteOrder(t.who.businessId, orderId)
    await sim.control.drainDeliveries()
    const update = events(r, "productUpdate")[0]!.json.data
    assert.strictEqual(update.id, 100004)
    assert.strictEqual(update.prices.retail, 77000)
    assert.strictEqual(update.category.id, update.categoryId)
    assert.deepStrictEqual(events(r, "productDelete")[0]!.json.data, [100004])
    assert.strictEqual(events(r, "orderUpdate")[0]!.json.data.info.status, 59)
    assert.match(events(r, "orderDelete")[0]!.body, new RegExp(`"data":\\[${orderId}\\]\\}$`))
  })

  it("sends events only for businesses that granted the app", async () => {
    const t = await tenant()
    const r = await hook()
    await sim.control.enableWebhooks(t.app.appId, { callbackUrl: r.url })
    const stranger = await sim.control.createBusiness({ products: 5 })
    const res = await sim.control.updateProduct(stranger.businessId, "100001", { price: 3 })
    assert.strictEqual(res.queued, 0)
  })

  it("redelivers a failing event at most 3 times, and counts redirects as failures (not followed)", async () => {
    const t = await tenant()
    const target = await hook()
    let enabled = false
    const r = await hook((req) =>
      req.json?.event === "webhooksEnabled" && !enabled ? ((enabled = true), { status: 200 }) : { status: 302, location: target.url }
    )
    await sim.control.enableWebhooks(t.app.appId, { callbackUrl: r.url })
    await sim.control.updateProduct(t.who.businessId, "100001", { price: 5 })
    await sim.control.drainDeliveries()
    assert.strictEqual(events(r, "productUpdate").length, 4)
    assert.strictEqual(target.received.length, 0)
    const log = await sim.control.deliveries({ appId: t.app.appId, event: "productUpdate" })
    assert.deepStrictEqual(log.deliveries.map((d) => [d.attempt, d.outcome, d.status]), [
      [1, "redirect", 302],
      [2, "redirect", 302],
      [3, "redirect", 302],
      [4, "redirect", 302]
    ])
  })

  it("treats a slow answer as a failure (timeout)", async () => {
    const t = await tenant()
    const r = await hook((req) => req.json?.event === "webhooksEnabled" ? { status: 200 } : { status: 200, delayMs: 400 })
    await sim.control.enableWebhooks(t.app.appId, { callbackUrl: r.url })
    await sim.control.updateProduct(t.who.businessId, "100001", { price: 6 })
    await sim.control.drainDeliveries()
    const log = await sim.control.deliveries({ appId: t.app.appId, event: "productUpdate" })
    assert.strictEqual(log.deliveries.length, 4)
    assert.isTrue(log.deliveries.every((d) => d.outcome === "timeout"))
  })

  it("stops deliveries when the token expires (queued retries are cancelled)", async () => {
    const t = await tenant()
    await sim.control.setWebhookOptions({ retryDelaysMs: [300] })
    try {
      const r = await hook((req) => req.json?.event === "webhooksEnabled" ? { status: 200 } : { status: 503 })
      await sim.control.enableWebhooks(t.app.appId, { callbackUrl: r.url })
      await sim.control.updateProduct(t.who.businessId, "100001", { price: 7 })
      await eventually(async () => events(r, "productUpdate").length === 1 ? true : undefined)
      await sim.control.expireToken(t.token.accessToken)
      await sim.control.drainDeliveries()
      const log = await sim.control.deliveries({ appId: t.app.appId, event: "productUpdate" })
      assert.deepStrictEqual(log.deliveries.map((d) => d.outcome), ["status", "cancelled"])
      assert.strictEqual((await sim.control.updateProduct(t.who.businessId, "100001", { price: 8 })).queued, 0)
    } finally {
      await sim.control.setWebhookOptions({ retryDelaysMs: [5] })
    }
  })

  it("degrades on a low success rate: re-check, then webhooks off, then the app is locked", async () => {
    const t = await tenant()
    await sim.control.setWebhookOptions({ degradation: { window: 8, minSamples: 4, below: 0.5 } })
    try {
      const r = await hook((req) => req.json?.event === "webhooksEnabled" ? { status: 200 } : { status: 500 })
      await sim.control.enableWebhooks(t.app.appId, { callbackUrl: r.url })
      await sim.control.updateProduct(t.who.businessId, "100001", { price: 1 })
      await sim.control.drainDeliveries()
      assert.strictEqual(events(r, "webhooksEnabled").length, 2, "re-sent to check the URL")
      assert.strictEqual((await sim.control.app(t.app.appId)).webhooks.status, "enabled")
      await sim.control.updateProduct(t.who.businessId, "100001", { price: 2 })
      await sim.control.drainDeliveries()
      const off = await sim.control.app(t.app.appId)
      assert.strictEqual(off.webhooks.status, "off")
      assert.strictEqual(off.locked, false)
      // turning webhooks on again requires repeating the enabling steps
      assert.isTrue((await sim.control.enableWebhooks(t.app.appId, { callbackUrl: r.url })).enabled)
      await sim.control.updateProduct(t.who.businessId, "100001", { price: 3 })
      await sim.control.drainDeliveries()
      assert.isTrue((await sim.control.app(t.app.appId)).locked)
      assert.strictEqual((await call(sim, t.who, "product/list", {})).json.errorCode, "ERR_INVALID_APP_ID")
    } finally {
      await sim.control.setWebhookOptions({ degradation: { minSamples: 100 } })
    }
  })

  it("drops, duplicates and reorders deliveries on demand", async () => {
    const t = await tenant()
    const r = await hook()
    await sim.control.enableWebhooks(t.app.appId, { callbackUrl: r.url })
    await sim.control.addFault({ kind: "webhookDrop", appId: t.app.appId, count: 1 })
    await sim.control.updateProduct(t.who.businessId, "100001", { name: "dropped" })
    await sim.control.addFault({ kind: "webhookDuplicate", appId: t.app.appId, count: 1 })
    await sim.control.updateProduct(t.who.businessId, "100001", { name: "twice" })
    await sim.control.drainDeliveries()
    const names = () => events(r, "productUpdate").map((x) => x.json.data.name)
    assert.deepStrictEqual(names(), ["twice", "twice"])
    await sim.control.addFault({ kind: "webhookReorder", appId: t.app.appId, count: 1 })
    await sim.control.updateProduct(t.who.businessId, "100001", { name: "first" })
    await sim.control.updateProduct(t.who.businessId, "100001", { name: "second" })
    await sim.control.drainDeliveries()
    assert.deepStrictEqual(names().slice(2), ["second", "first"])
    const dropped = await sim.control.deliveries({ appId: t.app.appId, outcome: "dropped" })
    assert.strictEqual(dropped.deliveries.length, 1)
  })

  it("sends hostile bodies on demand", async () => {
    const t = await tenant()
    const r = await hook()
    await sim.control.enableWebhooks(t.app.appId, { callbackUrl: r.url })
    await sim.control.addFault({ kind: "webhookMalformed", variant: "nonJson", appId: t.app.appId, count: 1 })
    await sim.control.addFault({ kind: "webhookMalformed", variant: "wrongVerifyToken", appId: t.app.appId, count: 1 })
    await sim.control.updateProduct(t.who.businessId, "100001", { name: "a" })
    await sim.control.updateProduct(t.who.businessId, "100001", { name: "b" })
    await sim.control.drainDeliveries()
    const bodies = r.received.slice(1)
    assert.isUndefined(bodies[0]!.json)
    assert.match(bodies[0]!.body, /^<html>/)
    assert.match(bodies[1]!.json.webhooksVerifyToken, /^wrong-/)
  })
})
