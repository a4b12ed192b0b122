import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import { Catalogue, CommandKind, EngineRecordCommands } from "@ocs/protocol"

const transitions: ReadonlyArray<EngineRecordCommands.Transition> = [
  { state: "requested", command: "c", kind: "bill.addRetail", payload: { depotId: 1, products: [{ id: "9007199254740993", quantity: 1 }] }, requestedBy: { type: "plugin", name: "p" }, idempotencyKey: "k", fingerprint: "f", marker: "ocs:m" },
  { state: "sent", command: "c", attempt: 1 },
  { state: "inDoubt", command: "c", attempt: 1, reason: { tag: "RequestTimeout", message: "no answer" } },
  { state: "inDoubt", command: "c", attempt: 1, reason: { tag: "ReadBackFailed", message: "unreadable" }, evidence: "bill/list: 503" },
  { state: "retried", command: "c", afterAttempt: 1, by: "admin" },
  { state: "answered", command: "c", attempt: 2, status: 200, body: `{"code":1,"data":{"id":12345678901234567890}}`, entityId: "12345678901234567890" },
  { state: "confirmed", command: "c", entityId: "12345678901234567890", by: "answer" },
  { state: "failed", command: "d", reason: { tag: "InvalidFormFields", code: "ERR_INVALID_FORM_FIELDS", message: "x" } },
  { state: "cancelled", command: "e", by: "admin" }
]

describe("EngineRecordCommands", () => {
  it("every transition reads back as written; the answer's exact body is kept as text", () => {
    for (const t of transitions) assert.deepStrictEqual(EngineRecordCommands.decodeText(EngineRecordCommands.encode(t)), Option.some(t))
    assert.isTrue(Option.isNone(EngineRecordCommands.decodeText(`{"state":"sent"}`)))
    assert.isTrue(Option.isNone(EngineRecordCommands.decodeText("not json")))
  })

  it("dedupe keys: one request per tenant and key, one record per attempt and reason, one final state", () => {
    const keys = transitions.slice(0, 7).map((t) => EngineRecordCommands.dedupeKey("1:2", t))
    assert.strictEqual(new Set(keys).size, keys.length)
    assert.strictEqual(EngineRecordCommands.dedupeKey("1:2", transitions[0]!), "command:1:2:k")
    assert.notStrictEqual(EngineRecordCommands.dedupeKey("1:3", transitions[0]!), EngineRecordCommands.dedupeKey("1:2", transitions[0]!))
    assert.strictEqual(
      EngineRecordCommands.dedupeKey("1:2", { state: "failed", command: "c", reason: { tag: "t", message: "m" } }),
      EngineRecordCommands.dedupeKey("1:2", { state: "confirmed", command: "c", by: "person" })
    )
  })

  it("every write of the catalogue is a command kind, sent to its own path", () => {
    assert.deepStrictEqual([...CommandKind.names].sort(), Catalogue.writes.map((w) => w.kind).sort())
    for (const w of Catalogue.writes) assert.strictEqual(CommandKind.kinds[w.kind].operation.path, `/v3.0/${w.resource}/${w.operation}`)
  })
})
