import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { Records, Webhook } from "@ocs/protocol"

const decode = (text: string) => {
  const r = Webhook.decodeText(text)
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

describe("Webhook", () => {
  it("webhooksEnabled: no businessId, registeredEvents id -> name", () => {
    const d = decode('{"event":"webhooksEnabled","webhooksVerifyToken":"vt","data":{"registeredEvents":{"101":"productAdd","102":"productUpdate","110":"inventoryChange","202":"orderUpdate"}}}')
    assert.strictEqual(d._tag, "Known")
    if (d._tag !== "Known" || d.event !== "webhooksEnabled") return
    assert.strictEqual(d.businessId, undefined)
    assert.strictEqual(d.verifyToken, "vt")
    assert.deepStrictEqual(d.data.registeredEvents, { "101": "productAdd", "102": "productUpdate", "110": "inventoryChange", "202": "orderUpdate" })
    for (const [id, name] of Object.entries(Webhook.knownEventIds)) assert.strictEqual(d.data.registeredEvents?.[id], name)
  })

  it("decodes each of the spec's event names, keeping unknown fields and big businessIds", () => {
    const bodies: Record<Webhook.EventName, string> = {
      webhooksEnabled: '{"registeredEvents":{}}',
      productAdd: '{"id":9007199254740993,"name":"Tea","price":10,"colour":"green"}',
      productUpdate: '{"id":1,"name":"Tea 2"}',
      productDelete: '[1, 2]',
      inventoryChange: '[{"id":1,"remain":5,"available":4,"depots":[{"id":2,"remain":5,"available":4}]}]',
      orderAdd: '{"info":{"id":7,"status":54,"depotId":2},"channel":{"appOrderId":"o-1","saleChannel":10},"shippingAddress":{"name":"Ann","mobile":"0900"},"products":[{"productId":1,"quantity":2}]}',
      orderUpdate: '{"info":{"id":7,"status":59}}',
      orderDelete: '[7]',
      orderPartialReturn: '{"info":{"id":7,"status":60},"originalOrder":{"id":6}}',
      paymentReceived: '{"id":3,"orderId":7,"amount":20,"method":"bank"}',
      appUninstalled: 'null'
    }
    for (const name of Webhook.eventNames) {
      const d = decode(`{"event":"${name}","businessId":123456789012345678901,"webhooksVerifyToken":"vt","data":${bodies[name]}}`)
      assert.strictEqual(d._tag, "Known", name)
      assert.strictEqual(d.event, name)
      assert.strictEqual(d.businessId, "123456789012345678901")
    }
    const add = decode(`{"event":"productAdd","businessId":1,"data":${bodies.productAdd}}`)
    if (add._tag === "Known" && add.event === "productAdd") {
      assert.strictEqual(Records.recordId(add.data), "9007199254740993")
      assert.strictEqual(add.data["colour"], "green")
    } else assert.fail("productAdd")
    const order = decode(`{"event":"orderAdd","businessId":1,"data":${bodies.orderAdd}}`)
    if (order._tag === "Known" && order.event === "orderAdd") {
      const summary = Records.orderSummary(order.data)
      assert.strictEqual(summary.id, "7")
      assert.strictEqual(summary.customerName, "Ann")
      assert.strictEqual(summary.customerMobile, "0900")
      assert.strictEqual(summary.appOrderId, "o-1")
      assert.strictEqual(summary.status, "54")
      assert.strictEqual(order.data.products?.length, 1)
    } else assert.fail("orderAdd")
  })

  it("inventoryChange may carry several products", () => {
    // v3 (an array), a `products` list, and v2 (an object keyed by product id).
    for (const data of ['{"products":[{"productId":1,"remain":1},{"productId":2,"remain":0}]}', '[{"id":1},{"id":2}]', '{"1":{"remain":3},"2":{"remain":0}}']) {
      const d = decode(`{"event":"inventoryChange","businessId":1,"data":${data}}`)
      if (d._tag === "Known" && d.event === "inventoryChange") assert.strictEqual(d.data.length, 2)
      else assert.fail("inventoryChange")
    }
  })

  it("an event name outside the spec is kept as Unknown, data untouched", () => {
    const d = decode('{"event":"invoiceAdd","businessId":5,"data":{"invoiceId":9007199254740993,"x":[1,2]}}')
    assert.strictEqual(d._tag, "Unknown")
    assert.strictEqual(d.event, "invoiceAdd")
    assert.deepStrictEqual(d.data, { invoiceId: 9007199254740993n, x: [1, 2] })
  })

  it("refuses what is not an envelope, with a typed error", () => {
    for (const text of ['{"data":{}}', '{"event":5}', "[]", '"x"', '{"event":"productAdd","businessId":"abc"}', '{"event":"productAdd","data":{"id":"x1"}}']) {
      assert.isTrue(Result.isFailure(Webhook.decodeText(text)), text)
    }
  })

  it("property: arbitrary JSON bodies never throw", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(...Webhook.eventNames, "somethingNew"), (data, event) => {
        const r = Webhook.decode({ event, businessId: 1, data })
        return Result.isSuccess(r) || r.failure._tag === "InvalidDelivery"
      }),
      { numRuns: 1000 }
    )
  })
})
