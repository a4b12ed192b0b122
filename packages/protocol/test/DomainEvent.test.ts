import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import { DomainEvent } from "@ocs/protocol"

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
    const badData = DomainEvent.decode(record({ body: '{"event":"productAdd","businessId":5,"data":{"price":"free"}}' }))
    assert.strictEqual(badData[0]!._tag, "UnknownEvent")
    if (badData[0]!._tag === "UnknownEvent") assert.include(badData[0]!.reason, "productAdd")
  })

  it("sync pages become one observation per record, typed or generic by entity kind", () => {
    const page = (kind: string, data: string) =>
      DomainEvent.decode(record({ source: "sync", type: `pos:/v3.0/${kind}/list`, body: `{"code":1,"data":${data},"paginator":{"next":null}}`, meta: DomainEvent.syncMeta({ kind, idField: kind === "invoice" ? "invoiceId" : "id", updatedAtField: "updatedAt" }) }))
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

  it("system notes change no read model; the decoder is versioned", () => {
    assert.deepStrictEqual(DomainEvent.decode(record({ source: "system", type: "rateLimit.locked" })), [])
    assert.strictEqual(DomainEvent.LATEST, 1)
    assert.strictEqual(DomainEvent.decoders[1], DomainEvent.decodeV1)
  })
})
