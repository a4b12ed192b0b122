import { assert, describe, it } from "@effect/vitest"
import { Option, Result, Schema } from "effect"
import { Catalogue, Ids, Json, Operation, Paginator, Records } from "@ocs/protocol"

const tenant = Ids.makeTenant(1001, 9007199254740993n)

describe("Operation", () => {
  it("spec Endpoints: builds POST {base}/v3.0/<resource>/<operation>?appId=&businessId=", () => {
    assert.strictEqual(
      Operation.url("https://pos.example/api/", Operation.productList, tenant),
      "https://pos.example/api/v3.0/product/list?appId=1001&businessId=9007199254740993"
    )
    assert.deepStrictEqual(Operation.headers("tok-1"), { authorization: "tok-1", "content-type": "application/json" })
  })

  it("product/list and product/add are defined as the spec shows them", () => {
    assert.strictEqual(Operation.productList.path, "/v3.0/product/list")
    assert.strictEqual(Operation.productList.kind, "list")
    assert.strictEqual(Operation.productList.pageSizeMax, 100)
    assert.deepStrictEqual(Operation.productList.rateLimit, { requests: 150, windowSeconds: 30 })
    assert.strictEqual(Operation.productAdd.path, "/v3.0/product/add")
    assert.strictEqual(Operation.productAdd.kind, "command")
  })

  it("product/list request: filters.name, sort field -> asc|desc, size and the cursor", () => {
    const filters = Schema.decodeUnknownSync(Operation.ProductListFilters)({ name: "tea", other: 1 })
    const sort = Schema.decodeUnknownSync(Operation.ProductListSort)({ name: "asc", price: "desc" })
    assert.throws(() => Schema.decodeUnknownSync(Operation.ProductListSort)({ name: "up" }))
    const next = Option.getOrThrow(Paginator.nextCursor('{"code":1,"paginator":{"next":{"b":2,"a":[9007199254740993]}}}'))
    assert.strictEqual(
      Operation.body({ filters, paginator: Paginator.toRequest({ size: 100, sort, next }) }),
      '{"filters":{"name":"tea","other":1},"paginator":{"size":100,"sort":{"name":"asc","price":"desc"},"next":{"b":2,"a":[9007199254740993]}}}'
    )
  })

  it("product/add: array of products in; appProductId, id (lossless), barcode out", () => {
    const request = Schema.decodeUnknownSync(Operation.ProductAddRequest)([
      { appProductId: "p-1", code: "C1", barcode: "111", name: "Tea", price: 12.5 }
    ])
    assert.strictEqual(Operation.body(request), '[{"appProductId":"p-1","code":"C1","barcode":"111","name":"Tea","price":12.5}]')
    const data = Result.getOrThrow(Json.parse('[{"appProductId":"p-1","id":9007199254740993,"barcode":"111"}]'))
    const out = Schema.decodeUnknownSync(Operation.productAdd.item)(data)
    assert.strictEqual(out[0]!.id, "9007199254740993")
  })

  it("operations the spec does not show are declared as data, and validated", () => {
    const invoices = Operation.declare({
      family: "pos",
      resource: "invoice",
      operation: "list",
      kind: "list",
      pageSizeMax: 200,
      rateLimit: { requests: 60, windowSeconds: 30 },
      entity: { kind: "invoice", idField: "invoiceId" },
      incremental: { from: "updatedAtFrom", to: "updatedAtTo", format: "unix" }
    })
    assert.strictEqual(invoices.path, "/v3.0/invoice/list")
    assert.strictEqual(invoices.pageSizeMax, 200)
    assert.strictEqual(Operation.key(invoices), "pos:/v3.0/invoice/list")
    const page = Operation.declare({ family: "vpage", resource: "page", operation: "get", kind: "command" })
    assert.strictEqual(Operation.url("http://vpage.local", page, tenant), "http://vpage.local/v3.0/page/get?appId=1001&businessId=9007199254740993")
    assert.throws(() => Operation.declare({ family: "erp", resource: "x", operation: "y", kind: "list" }))
    assert.throws(() => Operation.declare({ family: "pos", resource: "../x", operation: "y", kind: "list" }))
    assert.strictEqual(Operation.orderList.incremental?.from, "updatedAtFrom")
  })

  it("keeps unknown record fields and reads appOrderId through its deprecated alias", () => {
    const order = Schema.decodeUnknownSync(Records.Order)({ id: 5, orderPrivateId: "legacy-1", extra: { deep: true } })
    assert.strictEqual(Records.appOrderIdOf(order), "legacy-1")
    assert.deepStrictEqual(order["extra"], { deep: true })
    const both = Schema.decodeUnknownSync(Records.Order)({ appOrderId: "new-1", orderPrivateId: "legacy-1" })
    assert.strictEqual(Records.appOrderIdOf(both), "new-1")
  })

  it("the catalogue declares every documented read, and typed operations follow it", () => {
    assert.isAtLeast(Catalogue.entries.length, 50)
    for (const e of Catalogue.entries) {
      assert.match(e.resource, /^[a-z]+$/)
      assert.include(["documented", "seen in a public client", "inferred"], e.certainty)
    }
    const bills = Operation.billList
    assert.strictEqual(bills.path, "/v3.0/bill/list")
    assert.deepStrictEqual(bills.window, { from: "fromDate", to: "toDate", format: "date", maxDays: 31 })
    assert.strictEqual(bills.incremental, undefined, "bills have no updated time")
    const orders = Operation.orderList
    assert.strictEqual(orders.entity?.idField, "info.id")
    assert.strictEqual(orders.window?.from, "createdAtFrom")
    assert.deepStrictEqual(orders.incremental, { from: "updatedAtFrom", to: "updatedAtTo", format: "unix", maxDays: 31 })
    assert.deepStrictEqual(Operation.defaultReads.map((o) => o.path), [
      "/v3.0/product/list", "/v3.0/order/list", "/v3.0/bill/list", "/v3.0/customer/list", "/v3.0/business/depot",
      "/v3.0/product/inventory", "/v3.0/product/category", "/v3.0/product/brand"
    ])
    assert.deepStrictEqual(Operation.productInventory([3]).filters, { depotIds: [3] })
    // Neither invented list survives.
    assert.isUndefined(Catalogue.find("pos", "payment", "list"))
    assert.isUndefined(Catalogue.find("pos", "inventory", "list"))
  })

  it("a record schema from a documented field tree checks nesting and keeps unknown fields", () => {
    const schema = Catalogue.recordSchema(Catalogue.find("pos", "order", "history")!.record)
    const ok = Schema.decodeUnknownSync(schema)({ logId: 1, status: { old: 54, new: 55 }, surprise: [1] })
    assert.deepStrictEqual(ok["surprise"], [1])
    assert.throws(() => Schema.decodeUnknownSync(schema)({ logId: 1, status: "not an object" }))
  })

  it("filter bounds: unix seconds, ISO text and the service's calendar days (UTC+7), both ways", () => {
    const at = Date.UTC(2026, 0, 31, 18, 30) // 01:30 on Feb 1st in the service's zone
    assert.strictEqual(Operation.formatBound(at, "unix"), Math.floor(at / 1000))
    assert.strictEqual(Operation.formatBound(at, "date"), "2026-02-01")
    assert.strictEqual(Operation.parseBound("2026-02-01", "date", "start"), Date.UTC(2026, 0, 31, 17, 0))
    assert.strictEqual(Operation.parseBound("2026-02-01", "date", "end"), Date.UTC(2026, 1, 1, 17, 0) - 1)
    assert.strictEqual(Operation.parseBound(Operation.formatBound(at, "unix"), "unix"), Math.floor(at / 1000) * 1000)
    assert.strictEqual(Operation.parseBound("2026-2-1", "date"), undefined)
    assert.strictEqual(Operation.parseBound("soon", "unix"), undefined)
  })
})
