import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Catalogue from "@ocs/protocol/Catalogue"
import type { RunningSimulator } from "../src/index.ts"
import { call, type Caller, start } from "./helpers.ts"

describe("product/add, product/edit and customer/add", () => {
  let sim: RunningSimulator
  let demo: Caller
  beforeAll(async () => {
    sim = await start({ products: 20, customers: 10, seed: 3 })
    demo = sim.demo!
  })
  afterAll(() => sim.close())

  const products = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({ appProductId: `${prefix}-${i}`, name: `Item ${i}`, price: 1000 + i }))

  it("serves every declared write, and an empty one names each required field of its declaration", async () => {
    assert.strictEqual(Catalogue.writes.length, 10)
    for (const w of Catalogue.writes) {
      const res = await call(sim, demo, `${w.resource}/${w.operation}`, w.body === "array" ? [{}] : {})
      assert.strictEqual(res.json.errorCode, "ERR_INVALID_FORM_FIELDS", `${w.kind}: ${res.text}`)
      const keys = Object.keys(res.json.messages)
      for (const path of w.required) {
        const named = w.body === "array"
          ? keys.some((k) => k.endsWith(`.0.${path}`))
          : keys.some((k) => k === path.split(/[.[]/)[0] || k.startsWith(`${path.split(/[.[]/)[0]}.`))
        assert.isTrue(named, `${w.kind}: ${path} not named in ${keys.join(", ")}`)
      }
    }
  })

  it("adds 100 products in one call, answered in order and listed by product/list", async () => {
    const added = await call(sim, demo, "product/add", products("P100", 100))
    assert.strictEqual(added.json.code, 1, added.text)
    assert.strictEqual(added.json.data.length, 100)
    assert.deepStrictEqual(added.json.data.map((d: any) => d.appProductId), products("P100", 100).map((p) => p.appProductId))
    const last = added.json.data[99]
    const listed = await call(sim, demo, "product/list", { filters: { ids: [last.id] } })
    assert.strictEqual(listed.json.data[0].appProductId, "P100-99")
    const counts = await sim.control.countEffects(demo.businessId, { kind: "product.add", keys: ["P100-0", "P100-99", "nope"] })
    assert.deepStrictEqual(counts.keys, { "P100-0": 1, "P100-99": 1, nope: 0 })
    const over = await call(sim, demo, "product/add", products("P101", 101))
    assert.strictEqual(over.json.messages["products"], "at most 100 products per call")
  })

  it("refuses a used appProductId by default, and stores it twice when set to accept", async () => {
    const first = await call(sim, demo, "product/add", [{ appProductId: "D-1", name: "One" }])
    assert.strictEqual(first.json.code, 1)
    const inCall = await call(sim, demo, "product/add", [{ appProductId: "D-2", name: "A" }, { appProductId: "D-2", name: "B" }])
    assert.strictEqual(inCall.json.messages["products.1.appProductId"], "already exists")
    const again = await call(sim, demo, "product/add", [{ appProductId: "D-1", name: "Again" }])
    assert.strictEqual(again.json.messages["products.0.appProductId"], "already exists")
    await sim.control.setApiSettings({ appProductIdDuplicates: "accept" })
    try {
      assert.strictEqual((await call(sim, demo, "product/add", [{ appProductId: "D-1", name: "Again" }])).json.code, 1)
      const counts = await sim.control.countEffects(demo.businessId, { kind: "product.add", keys: ["D-1"] })
      assert.strictEqual(counts.keys["D-1"], 2)
      assert.strictEqual(counts.duplicates["D-1"], 2)
    } finally {
      await sim.control.setApiSettings({ appProductIdDuplicates: "refuse" })
    }
  })

  it("product/edit changes only the fields sent and names bad fields", async () => {
    const id = String((await call(sim, demo, "product/add", [{ appProductId: "E-1", name: "Before", price: 10 }])).json.data[0].id)
    const ok = await call(sim, demo, "product/edit", { id, name: "After" })
    assert.strictEqual(ok.json.code, 1, ok.text)
    const p = await sim.control.product(demo.businessId, id)
    assert.strictEqual(p["name"], "After")
    assert.strictEqual((p["prices"] as any).retail, 10)
    const bad = await call(sim, demo, "product/edit", { id: "1", name: "", price: "x", appProductId: "Z" })
    assert.deepStrictEqual(Object.keys(bad.json.messages).sort(), ["appProductId", "id", "name", "price"])
    const missing = await call(sim, demo, "product/edit", [{ id }])
    assert.strictEqual(missing.json.errorCode, "ERR_INVALID_FORM_FIELDS")
  })

  it("adds 100 customers in one call; a known mobile updates its customer instead of adding one", async () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ name: `Khach ${i}`, mobile: `0966${String(i).padStart(6, "0")}`, type: 1 + (i % 2) }))
    const added = await call(sim, demo, "customer/add", items)
    assert.strictEqual(added.json.code, 1, added.text)
    assert.strictEqual(added.json.data.length, 100)
    assert.strictEqual(added.json.data[42].mobile, "0966000042")
    const found = await call(sim, demo, "customer/list", { filters: { mobile: "0966000042" } })
    assert.strictEqual(found.json.data.length, 1)
    assert.strictEqual(found.json.data[0].name, "Khach 42")
    assert.strictEqual(String(found.json.data[0].id), String(added.json.data[42].id))
    const again = await call(sim, demo, "customer/add", [{ name: "Khach moi", mobile: "0966000042", email: "k@x.vn" }])
    assert.strictEqual(String(again.json.data[0].id), String(added.json.data[42].id))
    const after = await call(sim, demo, "customer/list", { filters: { mobile: "0966000042" } })
    assert.strictEqual(after.json.data.length, 1)
    assert.strictEqual(after.json.data[0].name, "Khach moi")
    const counts = await sim.control.countEffects(demo.businessId, { kind: "customer.add" })
    assert.strictEqual(counts.total, 100)
  })

  it("customer/add names each bad field and takes at most 100", async () => {
    const bad = await call(sim, demo, "customer/add", [
      { name: "", mobile: "abc" },
      { mobile: "0911111111", gender: 5, email: "nope", birthday: "1/2/1990", type: 3 },
      { name: "Twice", mobile: "0911111111" },
      7
    ])
    assert.deepStrictEqual(Object.keys(bad.json.messages).sort(), [
      "customers.0.mobile",
      "customers.0.name",
      "customers.1.birthday",
      "customers.1.email",
      "customers.1.gender",
      "customers.1.name",
      "customers.1.type",
      "customers.2.mobile",
      "customers.3"
    ])
    const over = await call(sim, demo, "customer/add", Array.from({ length: 101 }, (_, i) => ({ name: "N", mobile: `0977${String(i).padStart(6, "0")}` })))
    assert.strictEqual(over.json.messages["customers"], "at most 100 customers per call")
    assert.strictEqual((await call(sim, demo, "customer/add", {})).json.errorCode, "ERR_INVALID_FORM_FIELDS")
  })
})
