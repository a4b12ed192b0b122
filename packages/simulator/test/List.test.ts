import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Json from "@ocs/protocol/Json"
import { DEPRECATION_ORDER_PRIVATE_ID, type RunningSimulator } from "../src/index.ts"
import { call, type Caller, start } from "./helpers.ts"

/** The exact text of paginator.next in a response, or undefined when the key is absent. */
const nextText = (text: string) => Json.extract(text, ["paginator", "next"])

/** Seeded times lie before this instant (fixed, so that a twin simulator serves the same data). */
const EPOCH = Math.floor(Date.now() / 3_600_000) * 3_600_000

/** Sends `body` with a raw cursor text spliced in as paginator.next. */
const withNext = (cursor: string, extra = "") => `{${extra}"paginator":{"size":20,"next":${cursor}}}`

describe("product/list pagination and cursors", () => {
  let sim: RunningSimulator
  let demo: Caller
  let big: Caller
  beforeAll(async () => {
    sim = await start({ products: 500, orders: 60, deletedRatio: 0.05, epochMs: EPOCH })
    demo = sim.demo!
    const t = await sim.control.createTenant({ products: 300, bigIds: true })
    big = { appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken }
  })
  afterAll(() => sim.close())

  it("refuses a page size above 100 on paginator.size", async () => {
    const res = await call(sim, demo, "product/list", { paginator: { size: 101 } })
    assert.strictEqual(res.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.property(res.json.messages, "paginator.size")
  })

  it("walks every product exactly once, with cursor shapes that change between pages", async () => {
    const seen = new Set<string>()
    const shapes = new Set<string>()
    let short = 0
    let next: string | undefined
    let last: ReturnType<typeof JSON.parse> = undefined
    for (let page = 0; page < 100; page++) {
      const res = await call(sim, demo, "product/list", next === undefined ? `{"paginator":{"size":20}}` : withNext(next))
      assert.strictEqual(res.json.code, 1, res.text)
      for (const p of res.json.data) {
        assert.isFalse(seen.has(String(p.id)))
        seen.add(String(p.id))
      }
      next = nextText(res.text)
      last = res.json
      if (next === undefined || next === "null") break
      if (res.json.data.length < 20) short++
      shapes.add(next.startsWith("[") ? "array" : next.startsWith(`{"id"`) ? "keyed" : "object")
    }
    const info = await sim.control.business(demo.businessId)
    assert.strictEqual(seen.size, info.counts!.products)
    assert.deepStrictEqual([...shapes].sort(), ["array", "keyed", "object"])
    assert.isTrue(short > 0, "deleted products leave short pages that still have a next")
    // product/list ends with an explicit null
    assert.strictEqual(last.paginator.next, null)
  })

  it("ends order/list by an absent next (every order, no window when ids are given)", async () => {
    const ids = Array.from({ length: 60 }, (_, i) => 500001 + i)
    const orders = await call(sim, demo, "order/list", { filters: { ids }, paginator: { size: 100 } })
    assert.strictEqual(orders.json.data.length, 60)
    assert.deepStrictEqual(orders.json.paginator, {})
  })

  it("issues integer-like keys in non-alphabetical order in cursors", async () => {
    const first = await call(sim, demo, "product/list", { paginator: { size: 5 } })
    assert.match(nextText(first.text)!, /^\{"id":\d+,"10":2,/)
    const second = await call(sim, demo, "product/list", withNext(nextText(first.text)!))
    assert.match(nextText(second.text)!, /^\{"z":\d+,"2":3,/)
  })

  it("refuses a cursor that is not the one issued", async () => {
    const first = await call(sim, demo, "product/list", { paginator: { size: 5 } })
    const cursor = nextText(first.text)!
    const parsed = JSON.parse(cursor)
    const tampered: Array<[string, string]> = [
      ["reduced to a bare value", String(parsed.id)],
      ["array of its values", JSON.stringify(Object.values(parsed))],
      ["key lost", cursor.replace(/,"h":"[0-9a-f]+"/, "")],
      ["value edited", cursor.replace(/"id":(\d+)/, (_, id) => `"id":${BigInt(id) + 7n}`)]
    ]
    for (const [what, text] of tampered) {
      const res = await call(sim, demo, "product/list", withNext(text))
      assert.strictEqual(res.json.errorCode, "ERR_INVALID_FORM_FIELDS", what)
      assert.property(res.json.messages, "paginator.next", what)
    }
    // whitespace does not matter; the exact structure does
    const spaced = await call(sim, demo, "product/list", withNext(cursor.replace(/,/g, ", ")))
    assert.strictEqual(spaced.json.code, 1)
    // an array cursor (the third page's) turned into an object
    const second = await call(sim, demo, "product/list", withNext(cursor))
    const third = await call(sim, demo, "product/list", withNext(nextText(second.text)!))
    const arrayCursor = nextText(third.text)!
    assert.isTrue(arrayCursor.startsWith("["))
    const asObject = JSON.stringify({ ...JSON.parse(arrayCursor) })
    const res = await call(sim, demo, "product/list", withNext(asObject))
    assert.strictEqual(res.json.errorCode, "ERR_INVALID_FORM_FIELDS")
  })

  it("writes big ids as integer literals and refuses a rounded big number in a cursor", async () => {
    const res = await call(sim, big, "product/list", { paginator: { size: 3 } })
    assert.match(res.text, /"id":9007199254740993,/)
    assert.strictEqual(typeof res.json.data[0].id, "bigint")
    const cursor = nextText(res.text)!
    // the same structure, but the id went through a JavaScript number
    const rounded = cursor.replace(/"id":(\d+)/, (_, digits: string) => `"id":${Number(digits)}`)
    assert.notStrictEqual(rounded, cursor)
    const roundedBack = await call(sim, big, "product/list", withNext(rounded))
    assert.strictEqual(roundedBack.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.match(roundedBack.json.messages["paginator.next"], /rounded/)
    const ok = await call(sim, big, "product/list", withNext(cursor))
    assert.strictEqual(ok.json.code, 1)
    assert.strictEqual(ok.json.data[0].id, 9007199254740996n)
  })

  it("resumes from a stored cursor (stateless) even on another simulator with the same seed", async () => {
    const first = await call(sim, demo, "product/list", { paginator: { size: 7 } })
    const cursor = nextText(first.text)!
    const again = await call(sim, demo, "product/list", withNext(cursor))
    const twin = await start({ products: 500, orders: 60, deletedRatio: 0.05, epochMs: EPOCH })
    try {
      const elsewhere = await call(twin, twin.demo!, "product/list", withNext(cursor))
      assert.strictEqual(elsewhere.text, again.text)
    } finally {
      await twin.close()
    }
  })

  it("filters by name, sorts by a field, and keeps pages stable under deletion", async () => {
    const res = await call(sim, demo, "product/list", { filters: { name: "red" }, paginator: { size: 100, sort: { price: "desc" } } })
    assert.isTrue(res.json.data.length > 0)
    assert.isTrue(res.json.data.every((p: { name: string }) => p.name.toLowerCase().includes("red")))
    const prices = res.json.data.map((p: { prices: { retail: number } }) => p.prices.retail)
    assert.deepStrictEqual(prices, [...prices].sort((a: number, b: number) => b - a))

    const first = await call(sim, demo, "product/list", { paginator: { size: 10, sort: { name: "asc" } } })
    const names = first.json.data.map((p: { name: string }) => p.name)
    assert.deepStrictEqual(names, [...names].sort())
    // delete the first product of the next page: the next page simply skips it
    const preview = await call(sim, demo, "product/list", withNext(nextText(first.text)!))
    const victim = preview.json.data[0].id
    await sim.control.deleteProduct(demo.businessId, victim)
    const after = await call(sim, demo, "product/list", withNext(nextText(first.text)!))
    assert.deepStrictEqual(after.json.data.map((p: { id: bigint }) => p.id), preview.json.data.slice(1).map((p: { id: bigint }) => p.id).concat(after.json.data.slice(-1).map((p: { id: bigint }) => p.id)))
    const sortError = await call(sim, demo, "product/list", { paginator: { sort: { colour: "asc" } } })
    assert.property(sortError.json.messages, "paginator.sort.colour")
  })

  it("filters by updatedAt for incremental sync", async () => {
    const since = Math.floor(Date.now() / 1000)
    const all = await call(sim, demo, "product/list", { filters: { updatedAtFrom: since }, paginator: { size: 100 } })
    assert.strictEqual(all.json.data.length, 0)
    await sim.control.updateProduct(demo.businessId, 100005, { price: 42 })
    const changed = await call(sim, demo, "product/list", { filters: { updatedAtFrom: since }, paginator: { size: 100 } })
    assert.deepStrictEqual(changed.json.data.map((p: { id: number; prices: { retail: number } }) => [p.id, p.prices.retail]), [[100005, 42]])
    const bad = await call(sim, demo, "order/list", { filters: { updatedAtTo: "yesterday" } })
    assert.property(bad.json.messages, "filters.updatedAtTo")
  })

  it("warns about the deprecated orderPrivateId", async () => {
    const res = await call(sim, demo, "order/list", { filters: { orderPrivateId: "AO-3" } })
    assert.deepStrictEqual(res.json.warning, [DEPRECATION_ORDER_PRIVATE_ID])
    assert.strictEqual(res.json.data[0].channel.appOrderId, "AO-3")
    const plain = await call(sim, demo, "order/list", { filters: { ids: [500003] } })
    assert.isUndefined(plain.json.warning)
    assert.strictEqual(plain.json.data[0].channel.appOrderId, "AO-3")
  })

  it("adds products, validating fields with dotted paths", async () => {
    const bad = await call(sim, demo, "product/add", [{ appProductId: "n1", name: "X", price: "1" }, { name: "Y" }])
    assert.strictEqual(bad.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.strictEqual(bad.json.messages["products.0.price"], "must be a number")
    assert.strictEqual(bad.json.messages["products.1.appProductId"], "is required")
    const ok = await call(sim, demo, "product/add", [{ appProductId: "n1", code: "C1", barcode: "123", name: "Added", price: 9.5 }])
    assert.strictEqual(ok.json.code, 1)
    assert.strictEqual(ok.json.data[0].appProductId, "n1")
    assert.strictEqual(ok.json.data[0].barcode, "123")
    const product = await sim.control.product(demo.businessId, String(ok.json.data[0].id))
    assert.strictEqual(product["name"], "Added")
    const dup = await call(sim, demo, "product/add", [{ appProductId: "n1", name: "Again", price: 1 }])
    assert.strictEqual(dup.json.messages["products.0.appProductId"], "already exists")
  })
})
