import { assert, describe, it } from "@effect/vitest"
import { Option, Schema } from "effect"
import { DomainEvent, EngineRecord } from "@ocs/protocol"

const raw = (over: Partial<DomainEvent.RawRecord>): DomainEvent.RawRecord => ({
  id: "0190a0b0-0000-7000-8000-000000000001",
  appId: "1001",
  businessId: "42",
  source: "sync",
  type: "product/list",
  receivedAt: 1_760_000_000_000,
  body: "{}",
  ...over
})

describe("EngineRecord", () => {
  it("a page's meta is written and read through the same shape", () => {
    const meta = EngineRecord.pageMeta({
      entity: { kind: "product", idField: "id", updatedAtField: "updatedAt" },
      mode: "full",
      pass: "p-1",
      baseline: true,
      cursor: null,
      next: "{\"id\":100}",
      records: 100,
      warnings: []
    }, { traceparent: "00-abc-def-01" })
    assert.isTrue(Option.isSome(Schema.decodeUnknownOption(EngineRecord.PageMeta)(meta)))
    assert.deepStrictEqual(EngineRecord.entityOf(meta), { kind: "product", idField: "id", updatedAtField: "updatedAt" })
    assert.strictEqual(EngineRecord.passOf(meta), "p-1")
    assert.isTrue(EngineRecord.isBaseline(meta))
    assert.strictEqual(meta["traceparent"], "00-abc-def-01")
  })

  it("older or partial metas read as absent, never throw", () => {
    assert.deepStrictEqual(EngineRecord.entityOf({ entity: { kind: "bill" } }), { kind: "bill", idField: "id" })
    assert.isUndefined(EngineRecord.entityOf({ entity: { idField: "id" } }))
    assert.isUndefined(EngineRecord.entityOf(null))
    assert.isUndefined(EngineRecord.passOf({ pass: 7 }))
    assert.isFalse(EngineRecord.isBaseline({ baseline: "yes" }))
    assert.isFalse(EngineRecord.isBaseline(undefined))
  })

  it("a completed pass round-trips and decodes to SyncPassCompleted", () => {
    const body = EngineRecord.encodePass({ pass: { id: "p-1", kind: "order", startedAt: 1_700_000_000_000, createdFrom: 1_690_000_000_000 } })
    const [event] = DomainEvent.decode(raw({ type: EngineRecord.PASS_TYPE, body }))
    assert.strictEqual(event?._tag, "SyncPassCompleted")
    if (event?._tag !== "SyncPassCompleted") return
    assert.strictEqual(event.passId, "p-1")
    assert.strictEqual(event.createdFrom, 1_690_000_000_000)
    const [bad] = DomainEvent.decode(raw({ type: EngineRecord.PASS_TYPE, body: "{\"pass\":{\"id\":\"p\"}}" }))
    assert.strictEqual(bad?._tag, "UnknownEvent")
  })

  it("a duplicate page's seen ids round-trip and decode to no event", () => {
    const body = EngineRecord.encodePassSeen({ pass: "p-1", ids: ["1", "2"] })
    assert.deepStrictEqual(Option.getOrUndefined(EngineRecord.decodePassSeen(JSON.parse(body))), { pass: "p-1", ids: ["1", "2"] })
    assert.deepStrictEqual(DomainEvent.decode(raw({ type: EngineRecord.PASS_SEEN_TYPE, body })), [])
  })

  it("change entries keep an embedded record's exact text and decode to their events", () => {
    const product = "{\"id\":9007199254740993,\"name\":\"Tea\",\"price\":1.50}"
    const body = EngineRecord.changesBody([
      EngineRecord.changeEntry({ change: "ProductUpdated", changedFields: ["price"], origin: "webhook" }, { name: "product", text: product }),
      EngineRecord.changeEntry({ change: "BillDeleted", billId: "77", reason: "not served by full pass p-1" })
    ])
    assert.include(body, product)
    const events = DomainEvent.decode(raw({ type: EngineRecord.CHANGES_TYPE, body }))
    assert.deepStrictEqual(events.map((e) => [e._tag, e.source]), [["ProductUpdated", "webhook"], ["BillDeleted", "sync"]])
    assert.strictEqual(EngineRecord.changesOf({ nothing: 1 }), undefined)
  })
})
