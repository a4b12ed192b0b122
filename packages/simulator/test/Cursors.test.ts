import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { RunningSimulator } from "../src/index.ts"
import { type Caller, start } from "./helpers.ts"

/**
 * A client that knows only plain JSON: it parses each answer with JSON.parse and sends the
 * cursor back with JSON.stringify, which moves integer-like keys ("10", "2") to the front.
 */
const plainPages = async (sim: RunningSimulator, who: Caller, operation: string, filters: object) => {
  const ids: Array<string> = []
  let next: unknown = undefined
  for (let page = 0; page < 200; page++) {
    const body = JSON.stringify({ filters, paginator: { size: 7, ...(next === undefined ? {} : { next }) } })
    const res = await fetch(`${sim.posBaseUrl}/v3.0/${operation}?appId=${who.appId}&businessId=${who.businessId}`, {
      method: "POST",
      headers: { authorization: who.accessToken, "content-type": "application/json" },
      body
    })
    const json = JSON.parse(await res.text())
    if (json.code !== 1) return { ids, refused: json }
    for (const r of json.data) ids.push(String(r.info?.id ?? r.id))
    next = json.paginator?.next
    if (next === undefined || next === null) return { ids, refused: undefined }
  }
  throw new Error("too many pages")
}

describe("cursors sent back by a plain-JSON client", () => {
  let sim: RunningSimulator
  let demo: Caller
  beforeAll(async () => {
    sim = await start({ products: 120, orders: 80, deletedRatio: 0.05 })
    demo = sim.demo!
  })
  afterAll(() => sim.close())

  it("issues cursors whose keys JSON.stringify reorders", async () => {
    const res = await fetch(`${sim.posBaseUrl}/v3.0/product/list?appId=${demo.appId}&businessId=${demo.businessId}`, {
      method: "POST",
      headers: { authorization: demo.accessToken },
      body: `{"paginator":{"size":3}}`
    })
    const text = await res.text()
    const raw = /"next":(\{.*\})\}\}$/.exec(text)![1]!
    assert.notStrictEqual(JSON.stringify(JSON.parse(raw)), raw)
  })

  it("by default accepts JSON-equal cursors: every product and every order exactly once", async () => {
    const info = await sim.control.business(demo.businessId)
    const products = await plainPages(sim, demo, "product/list", {})
    assert.isUndefined(products.refused)
    assert.strictEqual(products.ids.length, info.counts!.products)
    assert.strictEqual(new Set(products.ids).size, products.ids.length)

    const ids = Array.from({ length: 80 }, (_, i) => 500001 + i)
    const orders = await plainPages(sim, demo, "order/list", { ids })
    assert.isUndefined(orders.refused)
    assert.deepStrictEqual([...orders.ids].sort(), ids.map(String).sort())
  })

  it("under strict cursors (control switch) refuses the same client on paginator.next", async () => {
    await sim.control.setApiSettings({ strictCursors: true })
    try {
      for (const operation of ["product/list", "order/list"]) {
        const run = await plainPages(sim, demo, operation, operation === "order/list" ? { ids: Array.from({ length: 80 }, (_, i) => 500001 + i) } : {})
        assert.strictEqual(run.refused?.errorCode, "ERR_INVALID_FORM_FIELDS", operation)
        assert.property(run.refused.messages, "paginator.next")
        assert.strictEqual(run.ids.length, 7, "the first page was served, the first cursor refused")
      }
    } finally {
      await sim.control.setApiSettings({ strictCursors: false })
    }
  })

  it("--strict-cursors (option strictCursors) starts in strict mode", async () => {
    const strict = await start({ products: 30, strictCursors: true })
    try {
      assert.isTrue((await strict.control.apiSettings()).strictCursors)
      const run = await plainPages(strict, strict.demo!, "product/list", {})
      assert.strictEqual(run.refused?.errorCode, "ERR_INVALID_FORM_FIELDS")
    } finally {
      await strict.close()
    }
  })
})
