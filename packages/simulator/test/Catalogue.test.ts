import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Catalogue from "@ocs/protocol/Catalogue"
import * as Json from "@ocs/protocol/Json"
import * as Operation from "@ocs/protocol/Operation"
import { valueAt } from "@ocs/protocol/Records"
import type { RunningSimulator } from "../src/index.ts"
import { call, type Caller, start } from "./helpers.ts"

const DAY = 24 * 3600
const EPOCH = Math.floor(Date.now() / 3_600_000) * 3_600_000
const now = () => Math.floor(Date.now() / 1000)

/** Every record of a read, page by page with the cursors sent back as received. */
const all = async (sim: RunningSimulator, who: Caller, op: string, filters: object, family: "pos" | "vpage" = "pos") => {
  const out: Array<any> = []
  let next: string | undefined
  for (let page = 0; page < 500; page++) {
    const res = await call(sim, who, op, `{"filters":${Json.stringify(filters)},"paginator":{"size":50${next === undefined ? "" : `,"next":${next}`}}}`, { family })
    assert.strictEqual(res.json.code, 1, `${op}: ${res.text}`)
    out.push(...res.json.data)
    next = Json.extract(res.text, ["paginator", "next"])
    if (next === undefined || next === "null") return out
  }
  throw new Error("too many pages")
}

/** Records by id, 100 ids per query (the documented maximum of `ids`). */
const byIds = async (sim: RunningSimulator, who: Caller, op: string, ids: ReadonlyArray<number>, filters: object = {}) => {
  const out: Array<any> = []
  for (let i = 0; i < ids.length; i += 100) out.push(...await all(sim, who, op, { ...filters, ids: ids.slice(i, i + 100) }))
  return out
}

describe("the catalogue's reads", () => {
  let sim: RunningSimulator
  let demo: Caller
  beforeAll(async () => {
    sim = await start({ products: 200, orders: 300, bills: 200, customers: 40, epochMs: EPOCH, historyDays: 120 })
    demo = sim.demo!
  })
  afterAll(() => sim.close())

  it("serves every catalogued read at its family and path", async () => {
    // The deletion feeds list what was deleted: one order and one bill.
    const order = (await call(sim, demo, "order/list", { paginator: { size: 1 } })).json.data[0]
    const bill = (await call(sim, demo, "bill/list", { paginator: { size: 1 } })).json.data[0]
    await sim.control.deleteOrder(demo.businessId, String(order.info.id))
    await sim.control.deleteBill(demo.businessId, String(bill.id))
    // conversation/messages reads one conversation of the page service: a real one.
    const conversation = (await call(sim, demo, "conversation/list", { paginator: { size: 1 } }, { family: "vpage" })).json.data[0]
    for (const e of Catalogue.entries) {
      const filters = e.requiredFilters === undefined ? {} : Object.fromEntries(e.requiredFilters.map((f) => [f, e.filters[f] === "object" ? {} : e.filters[f] === "string" ? "x" : e.filters[f] === "number[]" ? [1] : 1]))
      if (e.resource === "conversation" && e.operation === "messages") filters["conversationId"] = conversation.id
      const body = e.operation === "detail"
        ? { id: "100002" }
        : e.resource === "app"
        ? { secretKey: sim.demo!.secretKey }
        : { filters }
      const res = await call(sim, demo, `${e.resource}/${e.operation}`, body, { family: e.family })
      assert.strictEqual(res.json?.code, 1, `${Catalogue.keyOf(e)}: ${res.text.slice(0, 300)}`)
      if (e.shape === "list") {
        assert.isArray(res.json.data, Catalogue.keyOf(e))
        assert.isAbove(res.json.data.length, 0, Catalogue.keyOf(e))
        // Records carry their documented id (the generic store builds them from the field tree).
        if (e.idField !== undefined) assert.isDefined(valueAt(res.json.data[0], e.idField), `${Catalogue.keyOf(e)} ${e.idField}`)
      } else assert.isObject(res.json.data)
    }
    // Back to the seeded data (same demo) for the counts the other tests compare.
    await sim.control.reset()
  })

  it("pages a generic read the same way and filters it by id", async () => {
    const users = await all(sim, demo, "business/user", {})
    assert.isAtLeast(users.length, 5)
    assert.strictEqual(new Set(users.map((u) => String(u.id))).size, users.length)
    const small = await call(sim, demo, "business/user", { paginator: { size: 2 } })
    assert.strictEqual(small.json.data.length, 2)
    assert.isObject(small.json.paginator.next)
    const one = await call(sim, demo, "business/user", { filters: { ids: [users[1].id] } })
    assert.deepStrictEqual(one.json.data, [users[1]])
    const vpage = await call(sim, demo, "page/list", { paginator: { size: 51 } }, { family: "vpage" })
    assert.property(vpage.json.messages, "paginator.size", "Vpage pages hold at most 50")
  })

  it("answers order/list for the last 31 days without a range, and every order window by window", async () => {
    const recent = await all(sim, demo, "order/list", {})
    const cut = now() - 31 * DAY
    assert.isAbove(recent.length, 0)
    assert.isTrue(recent.every((o) => o.info.createdAt >= cut))
    const everything = await byIds(sim, demo, "order/list", Array.from({ length: 300 }, (_, i) => 500001 + i))
    assert.strictEqual(everything.length, 300)
    assert.isTrue(everything.some((o) => o.info.createdAt < now() - 62 * DAY), "some orders are older than 62 days")
    assert.isAbove(everything.length, recent.length)
    const windows: Array<any> = []
    for (let to = now(); to > now() - 130 * DAY; to -= 31 * DAY) {
      windows.push(...await all(sim, demo, "order/list", { createdAtFrom: to - 31 * DAY + 1, createdAtTo: to }))
    }
    assert.deepStrictEqual(windows.map((o) => String(o.info.id)).sort(), everything.map((o) => String(o.info.id)).sort())
  })

  it("refuses a range longer than 31 days, naming the field", async () => {
    const orders = await call(sim, demo, "order/list", { filters: { createdAtFrom: now() - 32 * DAY, createdAtTo: now() } })
    assert.strictEqual(orders.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.property(orders.json.messages, "filters.createdAtFrom")
    const updated = await call(sim, demo, "order/list", { filters: { updatedAtFrom: now() - 40 * DAY, updatedAtTo: now() } })
    assert.property(updated.json.messages, "filters.updatedAtFrom")
    const bills = await call(sim, demo, "bill/list", { filters: { fromDate: "2025-01-01", toDate: "2025-02-01" } })
    assert.property(bills.json.messages, "filters.fromDate")
    const ok = await call(sim, demo, "bill/list", { filters: { fromDate: "2025-01-01", toDate: "2025-01-31" } })
    assert.strictEqual(ok.json.code, 1)
    const unknown = await call(sim, demo, "bill/list", { filters: { createdAtFrom: now() } })
    assert.match(unknown.json.messages["filters.createdAtFrom"], /unknown filter/)
  })

  it("answers bill/list by service calendar days, the last 31 without a range", async () => {
    const ids = Array.from({ length: 200 }, (_, i) => 800001 + i)
    const everything = await byIds(sim, demo, "bill/list", ids)
    assert.strictEqual(everything.length, 200)
    const recent = await all(sim, demo, "bill/list", {})
    const first = Operation.formatBound(Date.now() - 30 * DAY * 1000, "date") as string
    assert.isTrue(recent.every((b) => b.date >= first))
    assert.isBelow(recent.length, everything.length)
    const windows: Array<any> = []
    for (let end = Date.now(); end > Date.now() - 130 * DAY * 1000; end -= 31 * DAY * 1000) {
      windows.push(...await all(sim, demo, "bill/list", {
        fromDate: Operation.formatBound(end - 30 * DAY * 1000, "date"),
        toDate: Operation.formatBound(end, "date")
      }))
    }
    assert.deepStrictEqual(new Set(windows.map((b) => String(b.id))).size, 200)
    const b = everything.find((x) => x.mode === 1)
    assert.isDefined(b.orderId, "delivery bills name their order")
    assert.strictEqual(b.date, Operation.formatBound(b.created.createdAt * 1000, "date"))
  })

  it("filters orders, bills, customers and products by their documented filters", async () => {
    const ids = Array.from({ length: 300 }, (_, i) => 500001 + i)
    const success = await byIds(sim, demo, "order/list", ids, { statuses: [60] })
    assert.isAbove(success.length, 0)
    assert.isTrue(success.every((o) => o.info.status === 60))
    const depot2 = await byIds(sim, demo, "order/list", ids, { depotIds: [2] })
    assert.isTrue(depot2.every((o) => o.info.depotId === 2))
    const customers = await all(sim, demo, "customer/list", {})
    assert.strictEqual(customers.length, 40)
    const mobile = customers[3].mobile
    assert.deepStrictEqual((await all(sim, demo, "customer/list", { mobile })).map((c) => c.id), [customers[3].id])
    const byMobile = await all(sim, demo, "order/list", { shippingAddress: { mobile } })
    assert.isTrue(byMobile.every((o) => o.shippingAddress.mobile === mobile))
    const billsOf = await all(sim, demo, "bill/list", { customerMobile: mobile })
    assert.isTrue(billsOf.every((x) => x.customer.mobile === mobile))
    const categories = await all(sim, demo, "product/category", {})
    const inCategory = await all(sim, demo, "product/list", { categoryIds: [categories[0].id] })
    assert.isAbove(inCategory.length, 0)
    assert.isTrue(inCategory.every((p) => p.categoryId === categories[0].id))
    const brands = await all(sim, demo, "product/brand", {})
    assert.isTrue((await all(sim, demo, "product/list", { brandIds: [brands[1].id] })).every((p) => p.brandId === brands[1].id))
    const depots = await all(sim, demo, "business/depot", {})
    assert.deepStrictEqual(depots.map((d) => d.id), [1, 2, 3])
    const stock = await all(sim, demo, "product/inventory", { depotIds: [3] })
    assert.strictEqual(stock.length, (await all(sim, demo, "product/list", {})).length)
    assert.isTrue(stock.every((s) => s.inventory.depots.length === 1 && s.inventory.depots[0].id === 3))
    const bad = await call(sim, demo, "order/list", { filters: { statuses: "new" } })
    assert.property(bad.json.messages, "filters.statuses")
  })

  it("answers failures with messages in the chosen form (control switch)", async () => {
    const formOf = async () => (await call(sim, demo, "order/list", { filters: { colour: 1 } })).json.messages
    assert.deepStrictEqual(await formOf(), { "filters.colour": (await formOf())["filters.colour"] })
    try {
      await sim.control.setApiSettings({ messagesForm: "string" })
      assert.match(await formOf(), /^filters\.colour: unknown filter/)
      await sim.control.setApiSettings({ messagesForm: "array" })
      const list = await formOf()
      assert.isArray(list)
      assert.match(list[0], /^filters\.colour: /)
      await sim.control.setApiSettings({ messagesForm: "object" })
      const forbidden = await start({ demo: false, messagesForm: "object" })
      try {
        const t = await forbidden.control.createTenant({ products: 2, permissions: ["product"] })
        const res = await call(forbidden, { appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken }, "order/list", {})
        assert.strictEqual(res.json.errorCode, "ERR_403")
        assert.isString(res.json.messages.error)
      } finally {
        await forbidden.close()
      }
    } finally {
      await sim.control.setApiSettings({ messagesForm: "default" })
    }
  })
})
