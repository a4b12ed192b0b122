import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import { DomainEvent, EngineRecord } from "@ocs/protocol"

const record = (over: Partial<DomainEvent.RawRecord>): DomainEvent.RawRecord => ({
  id: "0190a0b0-0000-7000-8000-000000000001",
  appId: "1001",
  businessId: "9007199254740993",
  source: "webhook",
  type: "productAdd",
  receivedAt: 1_760_000_000_000,
  body: "{}",
  ...over
})

describe("DomainEvent decoder v1", () => {
  it("turns webhook records into typed events with tenant, source, time and a stable id", () => {
    const r = record({ body: '{"event":"productAdd","businessId":9007199254740993,"data":{"id":77,"name":"Tea"}}' })
    const [e] = DomainEvent.decode(r)
    assert.strictEqual(e!._tag, "ProductAdded")
    if (e!._tag !== "ProductAdded") return
    assert.strictEqual(e.id, `${r.id}:0`)
    assert.strictEqual(e.appId, "1001")
    assert.strictEqual(e.businessId, "9007199254740993")
    assert.strictEqual(e.source, "webhook")
    assert.strictEqual(e.receivedAt, r.receivedAt)
    assert.deepStrictEqual(DomainEvent.entityId(e), Option.some("77"))
    // Decoding the same record again yields the same ids: consumers can dedupe on them.
    assert.deepStrictEqual(DomainEvent.decode(r).map((x) => x.id), [e.id])
  })

  it("maps every spec event to its domain event", () => {
    const cases: Array<[string, string, DomainEvent.Tag]> = [
      ["productAdd", '{"id":1}', "ProductAdded"],
      ["productUpdate", '{"id":1}', "ProductUpdated"],
      ["productDelete", '{"id":1}', "ProductDeleted"],
      ["inventoryChange", '{"products":[{"productId":1,"quantity":3}]}', "InventoryChanged"],
      ["orderAdd", '{"id":2,"orderPrivateId":"x"}', "OrderAdded"],
      ["orderUpdate", '{"id":2}', "OrderUpdated"],
      ["orderDelete", '{"id":2}', "OrderDeleted"],
      ["paymentReceived", '{"id":3}', "PaymentReceived"]
    ]
    for (const [event, data, tag] of cases) {
      const [e] = DomainEvent.decode(record({ type: event, body: `{"event":"${event}","businessId":5,"data":${data}}` }))
      assert.strictEqual(e!._tag, tag, event)
    }
    const [order] = DomainEvent.decode(record({ body: '{"event":"orderAdd","businessId":5,"data":{"orderPrivateId":"legacy"}}' }))
    assert.strictEqual(order!._tag === "OrderAdded" && order.appOrderId, "legacy")
  })

  it("webhooksEnabled belongs to the application, not a business", () => {
    const [e] = DomainEvent.decode(record({ businessId: null, type: "webhooksEnabled", body: '{"event":"webhooksEnabled","data":{"registeredEvents":{"101":"productAdd"}}}' }))
    assert.strictEqual(e!._tag, "WebhooksEnabled")
    assert.strictEqual(e!.businessId, null)
  })

  it("unknown events and undecodable records surface as UnknownEvent, never dropped", () => {
    const unknown = DomainEvent.decode(record({ type: "invoiceAdd", body: '{"event":"invoiceAdd","businessId":5,"data":{"n":1}}' }))
    assert.strictEqual(unknown[0]!._tag, "UnknownEvent")
    const broken = DomainEvent.decode(record({ body: "{not json" }))
    assert.strictEqual(broken[0]!._tag, "UnknownEvent")
    const badData = DomainEvent.decode(record({ body: '{"event":"productAdd","businessId":5,"data":{"id":"not-a-number","prices":"free"}}' }))
    assert.strictEqual(badData[0]!._tag, "UnknownEvent")
    if (badData[0]!._tag === "UnknownEvent") assert.include(badData[0]!.reason, "productAdd")
  })

  it("sync pages become one observation per record, typed or generic by entity kind", () => {
    const page = (kind: string, data: string) =>
      DomainEvent.decode(record({ source: "sync", type: `pos:/v3.0/${kind}/list`, body: `{"code":1,"data":${data},"paginator":{"next":null}}`, meta: EngineRecord.entityMeta({ kind, idField: kind === "invoice" ? "invoiceId" : "id", updatedAtField: "updatedAt" }) }))
    const products = page("product", '[{"id":1,"name":"a"},{"id":9007199254740993,"name":"b"}]')
    assert.deepStrictEqual(products.map((e) => e._tag), ["ProductObserved", "ProductObserved"])
    assert.deepStrictEqual(products.map((e) => Option.getOrUndefined(DomainEvent.entityId(e))), ["1", "9007199254740993"])
    assert.deepStrictEqual(new Set(products.map((e) => e.id)).size, 2)
    assert.strictEqual(page("order", '[{"id":1}]')[0]!._tag, "OrderObserved")
    assert.strictEqual(page("payment", '[{"id":1}]')[0]!._tag, "PaymentObserved")
    const invoices = page("invoice", '[{"invoiceId":44,"updatedAt":"2026-01-01T00:00:00Z","total":5}]')
    assert.strictEqual(invoices[0]!._tag, "DocumentObserved")
    if (invoices[0]!._tag === "DocumentObserved") {
      assert.strictEqual(invoices[0]!.documentId, "44")
      assert.strictEqual(invoices[0]!.updatedAt, "2026-01-01T00:00:00Z")
    }
  })

  it("catalogued resources decode to their typed observations, ids read at their documented paths", () => {
    const page = (kind: string, idField: string, data: string) =>
      DomainEvent.decode(record({ source: "sync", type: `pos:/v3.0/${kind}/list`, body: `{"code":1,"data":${data}}`, meta: EngineRecord.entityMeta({ kind, idField }) }))
    const orders = page("order", "info.id", '[{"info":{"id":9007199254740995,"status":54,"updatedAt":1760000000},"channel":{"appOrderId":"A-1","saleChannel":42}}]')
    assert.strictEqual(orders[0]!._tag, "OrderObserved")
    assert.strictEqual(Option.getOrUndefined(DomainEvent.entityId(orders[0]!)), "9007199254740995")
    if (orders[0]!._tag === "OrderObserved") assert.strictEqual(orders[0]!.appOrderId, "A-1")
    const kinds: ReadonlyArray<[string, string]> = [["bill", "BillObserved"], ["customer", "CustomerObserved"], ["depot", "DepotObserved"], ["category", "CategoryObserved"], ["brand", "BrandObserved"]]
    for (const [kind, tag] of kinds) {
      const events = page(kind, "id", '[{"id":12,"name":"x","extra":{"kept":true}}]')
      assert.strictEqual(events[0]!._tag, tag, kind)
      assert.strictEqual(Option.getOrUndefined(DomainEvent.entityId(events[0]!)), "12", kind)
    }
    const stock = page("inventory", "productId", '[{"productId":5,"remain":9,"available":7,"depots":[{"id":1,"remain":4,"available":3},{"id":2,"remain":5,"available":4}]}]')
    assert.strictEqual(stock[0]!._tag, "InventoryObserved")
    if (stock[0]!._tag === "InventoryObserved") {
      assert.deepStrictEqual(stock[0]!.items.map((l) => [l.productId, l.depotId, l.remain, l.available]), [["5", "1", 4, 3], ["5", "2", 5, 4]])
    }
    // bill/list as documented: payment.cash and payment.transfer are objects
    const bill = page("bill", "id", '[{"id":8,"date":"2025-01-02","payment":{"amount":5,"cash":{"amount":5},"transfer":{"accountId":1,"name":"VCB","amount":0}}}]')
    assert.strictEqual(bill[0]!._tag, "BillObserved")
    // product/inventory as documented: the stock nested in `inventory`
    const nested = page("inventory", "productId", '[{"productId":6,"name":"x","inventory":{"remain":9,"available":7,"depots":[{"id":1,"remain":4,"available":3},{"id":3,"remain":5,"available":4}]}}]')
    if (nested[0]!._tag !== "InventoryObserved") assert.fail(nested[0]!._tag)
    assert.deepStrictEqual(nested[0]!.items.map((l) => [l.productId, l.depotId, l.remain, l.available]), [["6", "1", 4, 3], ["6", "3", 5, 4]])
  })

  it("an id beyond 64 bits is hostile: the record stays an unknown event, never a row", () => {
    const page = (data: string) =>
      DomainEvent.decode(record({ source: "sync", type: "pos:/v3.0/product/list", body: `{"code":1,"data":${data}}`, meta: EngineRecord.entityMeta({ kind: "product", idField: "id" }) }))
    assert.strictEqual(page(`[{"id":1${"0".repeat(400)},"price":1e999}]`)[0]!._tag, "UnknownEvent")
    assert.strictEqual(page(`[{"id":18446744073709551615}]`)[0]!._tag, "ProductObserved")
  })

  it("v3 webhooks: deletions list ids, stock changes list items per depot", () => {
    const deleted = DomainEvent.decode(record({ type: "productDelete", body: '{"event":"productDelete","businessId":5,"data":[11,12,13]}' }))
    assert.deepStrictEqual(deleted.map((e) => (e._tag === "ProductDeleted" ? e.productId : e._tag)), ["11", "12", "13"])
    assert.strictEqual(new Set(deleted.map((e) => e.id)).size, 3)
    const orders = DomainEvent.decode(record({ type: "orderDelete", body: '{"event":"orderDelete","businessId":5,"data":{"id":77}}' }))
    assert.deepStrictEqual(orders.map((e) => (e._tag === "OrderDeleted" ? e.orderId : e._tag)), ["77"])
    const changed = DomainEvent.decode(record({ type: "inventoryChange", body: '{"event":"inventoryChange","businessId":5,"data":[{"id":3,"remain":2,"depots":[{"id":8,"remain":2,"available":1}]},{"id":4,"remain":0}]}' }))
    assert.strictEqual(changed[0]!._tag, "InventoryChanged")
    if (changed[0]!._tag === "InventoryChanged") {
      assert.deepStrictEqual(changed[0]!.items.map((l) => [l.productId, l.depotId, l.remain]), [["3", "8", 2], ["4", "", 0]])
    }
    const uninstalled = DomainEvent.decode(record({ type: "appUninstalled", body: '{"event":"appUninstalled","businessId":5}' }))
    assert.strictEqual(uninstalled[0]!._tag, "AppUninstalled")
  })

  it("system notes change no read model; the decoder is versioned", () => {
    assert.deepStrictEqual(DomainEvent.decode(record({ source: "system", type: "rateLimit.locked" })), [])
    assert.strictEqual(DomainEvent.LATEST, 1)
    assert.strictEqual(DomainEvent.decoders[1], DomainEvent.decodeV1)
  })
})
