import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import fc from "fast-check"
import { Ids, Json } from "@ocs/protocol"
import { jsonText } from "./arbitraries.ts"

const ok = <A, E>(r: Result.Result<A, E>): A => {
  if (Result.isFailure(r)) throw new Error(`expected success, got ${String(r.failure)}`)
  return r.success
}

describe("Json (lossless)", () => {
  it("reads integers beyond 2^53 as bigint, digit for digit", () => {
    const value = ok(Json.parse('{"id": 9007199254740993, "businessId": 123456789012345678901234567890, "n": 42}')) as any
    assert.strictEqual(value.id, 9007199254740993n)
    assert.strictEqual(value.businessId, 123456789012345678901234567890n)
    assert.strictEqual(value.n, 42)
  })

  it("writes bigints back as integer literals", () => {
    assert.strictEqual(Json.stringify({ id: 9007199254740993n, list: [1n, 2.5, null] }), '{"id":9007199254740993,"list":[1,2.5,null]}')
  })

  it("round-trips any document semantically (parse . stringify . parse)", () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        const once = ok(Json.parse(text))
        const twice = ok(Json.parse(Json.stringify(once)))
        return Json.equals(once, twice)
      }),
      { numRuns: 500 }
    )
  })

  it("extracts the exact text of a nested value, whatever its formatting", () => {
    fc.assert(
      fc.property(jsonText, jsonText, (inner, sibling) => {
        const doc = `{ "z": ${sibling} ,"paginator" : {"size":10, "next" :\n${inner}  }, "a": 1}`
        return Json.extract(doc, ["paginator", "next"]) === inner.trim()
      }),
      { numRuns: 500 }
    )
  })

  it("refuses hostile input with typed errors, never a crash", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000)
    const results = [deep, "", "   ", "{", '{"a":}', "[1,]", "nul", '"unterminated'].map(Json.parse)
    for (const r of results) assert.isTrue(Result.isFailure(r))
    const tooDeep = Json.parse(deep)
    assert.strictEqual(Result.isFailure(tooDeep) && tooDeep.failure.reason, "TooDeep")
  })

  it("parseLossy makes the same checks as parse, with doubles for big integers", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000)
    for (const text of [deep, "", "   ", "{", '{"a":}', "[1,]", "nul", '"unterminated']) {
      const lossy = Json.parseLossy(text)
      const exact = Json.parse(text)
      assert.isTrue(Result.isFailure(lossy) && Result.isFailure(exact))
      assert.strictEqual(Result.isFailure(lossy) && lossy.failure.reason, Result.isFailure(exact) && exact.failure.reason)
    }
    const text = '{"id":9007199254740993,"n":1.5,"s":"x"}'
    assert.deepStrictEqual(ok(Json.parseLossy(text)), { id: 9007199254740992, n: 1.5, s: "x" })
    assert.deepStrictEqual(ok(Json.parse(text)), { id: 9007199254740993n, n: 1.5, s: "x" })
  })

  it("rejects invalid UTF-8 instead of replacing it", () => {
    const bad = Json.decodeUtf8(new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]))
    assert.strictEqual(Result.isFailure(bad) && bad.failure.reason, "InvalidUtf8")
    const good = ok(Json.parseBytes(new TextEncoder().encode('{"name":"café"}')))
    assert.strictEqual((good.value as any).name, "café")
    // A byte-order mark is ignored for parsing but kept in the text: the bytes survive.
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"a":1}')])
    const bom = ok(Json.parseBytes(bytes))
    assert.deepStrictEqual(new TextEncoder().encode(bom.text), bytes)
    assert.strictEqual((bom.value as any).a, 1)
  })
})

describe("Ids", () => {
  const decode = Schema.decodeUnknownSync(Ids.Id)
  it("normalises ids from numbers, bigints and digit strings to canonical strings", () => {
    assert.strictEqual(decode(12), "12")
    assert.strictEqual(decode(9007199254740993n), "9007199254740993")
    assert.strictEqual(decode("9007199254740993"), "9007199254740993")
    assert.throws(() => decode(1.5))
    assert.throws(() => decode("12a"))
  })
  it("writes big ids back to the wire exactly", () => {
    assert.strictEqual(Json.stringify({ id: Ids.toWire("9007199254740993") }), '{"id":9007199254740993}')
    assert.strictEqual(Json.stringify({ id: Ids.toWire("17") }), '{"id":17}')
  })
  it("keys tenants by appId:businessId", () => {
    assert.strictEqual(Ids.tenantKey(Ids.makeTenant(7, 123456789012345678901n)), "7:123456789012345678901")
  })
})
