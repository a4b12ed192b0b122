import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { ApiError, Envelope, Json, Warning } from "@ocs/protocol"
import { jsonText } from "./arbitraries.ts"

const success = (text: string) => {
  const r = Envelope.decode(text)
  if (Result.isFailure(r)) throw new Error(`expected success: ${r.failure.message}`)
  return r.success
}
const failure = (text: string) => {
  const r = Envelope.decode(text)
  if (Result.isSuccess(r)) throw new Error("expected failure")
  return r.failure
}

describe("Envelope", () => {
  it("a success may be only {code: 1}", () => {
    const s = success('{"code":1}')
    assert.strictEqual(s.data, undefined)
    assert.deepStrictEqual(s.warnings, [])
  })

  it("keeps data losslessly and the exact text", () => {
    const text = '{"code":1,"data":[{"appProductId":"a1","id":9007199254740993,"barcode":"b"}]}'
    const s = success(text)
    assert.strictEqual((s.data as any)[0].id, 9007199254740993n)
    assert.strictEqual(s.text, text)
  })

  it("normalises warning (string | object | array) to a list, keeping each raw entry", () => {
    assert.deepStrictEqual(success('{"code":1,"warning":"slow down"}').warnings.map((w) => w.text), ["slow down"])
    const arr = success('{"code":1,"warning":["a",{"x":1}]}').warnings
    assert.deepStrictEqual(arr.map((w) => w.raw), ["a", { x: 1 }])
    const obj = success('{"code":1,"warning":{"orderPrivateId":"deprecated, use appOrderId"}}').warnings
    assert.strictEqual(obj[0]!.text, "orderPrivateId: deprecated, use appOrderId")
  })

  it("spec Versioning 3: surfaces deprecations named in warnings (orderPrivateId -> appOrderId)", () => {
    const w = success('{"code":1,"data":[],"warning":["orderPrivateId is deprecated, please use appOrderId"]}').warnings
    assert.deepStrictEqual(w[0]!.deprecation, { field: "orderPrivateId", replacement: "appOrderId" })
    assert.deepStrictEqual(Warning.detectDeprecation("Field foo.bar is deprecated; use baz instead"), { field: "foo.bar", replacement: "baz" })
    assert.deepStrictEqual(Warning.detectDeprecation("Use newField instead of oldField"), { field: "oldField", replacement: "newField" })
    assert.strictEqual(Warning.detectDeprecation("all good"), undefined)
  })

  it("spec ERR_429 shape: singular message, lockedSeconds and unlockedAt", () => {
    const e = failure('{"code":0,"errorCode":"ERR_429","message":"Too many requests","data":{"lockedSeconds":30,"unlockedAt":1760000030}}')
    assert.strictEqual(e._tag, "RateLimited")
    if (e._tag !== "RateLimited") return
    assert.strictEqual(e.lockedSeconds, 30)
    assert.strictEqual(e.unlockedAt, 1760000030)
    assert.strictEqual(e.messages, "Too many requests")
    assert.isTrue(ApiError.isRetryable(e))
  })

  it("decodes every documented form of messages: a text, a list, a field map, and ERR_429's message", () => {
    const forms: ReadonlyArray<[string, string, string, string]> = [
      // [body, expected tag, expected text in the error's message, what is kept]
      ['{"code":0,"errorCode":"ERR_403","messages":"The app or accessToken is not authorized for this feature"}', "Forbidden", "not authorized", "string"],
      ['{"code":0,"errorCode":"ERR_403","messages":["not authorized", "ask the owner"]}', "Forbidden", "not authorized; ask the owner", "array"],
      ['{"code":0,"errorCode":"ERR_403","messages":{"permission":"products.read missing"}}', "Forbidden", "permission: products.read missing", "object"],
      ['{"code":0,"errorCode":"ERR_429","message":"Your app exceeded the API Rate Limit","data":{"lockedSeconds":10,"unlockedAt":1733387520}}', "RateLimited", "Your app exceeded the API Rate Limit", "string"]
    ]
    for (const [body, tag, text, kind] of forms) {
      const e = failure(body)
      assert.strictEqual(e._tag, tag, body)
      assert.include(e.message, text, body)
      const kept = (e as ApiError.ApiError).messages
      assert.strictEqual(Array.isArray(kept) ? "array" : typeof kept === "string" ? "string" : "object", kind, body)
    }
    // An ERR_403 sent with a list is an API error a person must act on, never a malformed answer
    // that a client would retry for ever.
    const e = failure('{"code":0,"errorCode":"ERR_403","messages":[]}')
    assert.strictEqual(e._tag, "Forbidden")
    assert.strictEqual(ApiError.isRetryable(e as ApiError.ApiError), false)
  })

  it("spec ERR_INVALID_FORM_FIELDS shape: keeps the dotted-path field map", () => {
    const e = failure('{"code":0,"errorCode":"ERR_INVALID_FORM_FIELDS","messages":{"products.0.price":"must be a number","paginator.size":"max 100"}}')
    assert.strictEqual(e._tag, "InvalidFormFields")
    if (e._tag !== "InvalidFormFields") return
    assert.deepStrictEqual(e.fields, { "products.0.price": "must be a number", "paginator.size": "max 100" })
    assert.include(e.message, "products.0.price: must be a number")
    assert.strictEqual(ApiError.requiredAction(e), "fix-request")
  })

  it("maps each of the spec's 13 codes to its own tagged error", () => {
    const expected: Record<string, [string, boolean, ApiError.Action]> = {
      ERR_INVALID_APP_ID: ["InvalidAppId", false, "fix-configuration"],
      ERR_INVALID_ACCESS_TOKEN: ["InvalidAccessToken", false, "regrant"],
      ERR_INVALID_VERSION: ["InvalidVersion", false, "regrant"],
      ERR_INVALID_BUSINESS_ID: ["InvalidBusinessId", false, "fix-configuration"],
      ERR_INVALID_DEPOT_ID: ["InvalidDepotId", false, "regrant"],
      ERR_EXCEEDED_RATE_LIMIT: ["ExceededRateLimit", true, "none"],
      ERR_BUSINESS_NOT_ENABLE_API: ["BusinessNotEnableApi", false, "enable-api"],
      ERR_INVALID_FORM_FIELDS: ["InvalidFormFields", false, "fix-request"],
      ERR_INVALID_DATA: ["InvalidData", false, "fix-request"],
      ERR_403: ["Forbidden", false, "regrant"],
      ERR_429: ["RateLimited", true, "none"],
      ERR_PAGE_EXPIRED: ["PageExpired", false, "fix-configuration"],
      ERR_INVALID_PAGE_ID: ["InvalidPageId", false, "fix-configuration"]
    }
    assert.deepStrictEqual([...ApiError.knownCodes].sort(), Object.keys(expected).sort())
    const tags = new Set<string>()
    for (const [code, [tag, retryable, action]] of Object.entries(expected)) {
      const e = failure(`{"code":0,"errorCode":"${code}","messages":"detail for ${code}"}`)
      assert.strictEqual(e._tag, tag)
      if (e._tag === "MalformedResponse") continue
      assert.strictEqual(e.errorCode, code)
      assert.strictEqual(ApiError.isRetryable(e), retryable, code)
      assert.strictEqual(ApiError.requiredAction(e), action, code)
      assert.include(e.message, `detail for ${code}`)
      tags.add(e._tag)
    }
    assert.strictEqual(tags.size, 13)
  })

  it("keeps an unknown error code (and a missing one) instead of dropping it", () => {
    const e = failure('{"code":0,"errorCode":"ERR_POS_SOMETHING_NEW","messages":{"x":"y"},"data":{"n":1}}')
    assert.strictEqual(e._tag, "UnknownApiError")
    if (e._tag !== "UnknownApiError") return
    assert.strictEqual(e.errorCode, "ERR_POS_SOMETHING_NEW")
    assert.deepStrictEqual(e.data, { n: 1 })
    assert.strictEqual(failure('{"code":0}')._tag, "UnknownApiError")
  })

  it("answers that are not envelopes are MalformedResponse, with an excerpt", () => {
    for (const text of ["<html>502</html>", "", "[]", '{"code":"1"}', '{"code":2}', '{"data":[]}', "null", '{"code":1,"messages":5}']) {
      const e = failure(text)
      assert.strictEqual(e._tag, "MalformedResponse", text)
    }
  })

  it("property: any envelope with arbitrary data and warning decodes; data survives losslessly", () => {
    fc.assert(
      fc.property(jsonText, fc.option(jsonText, { nil: undefined }), (data, warning) => {
        const text = `{"code":1,"data":${data}${warning === undefined ? "" : `,"warning":${warning}`}}`
        const s = success(text)
        const expected = Result.getOrThrow(Json.parse(data))
        return Json.equals(s.data, expected) && Array.isArray(s.warnings)
      }),
      { numRuns: 500 }
    )
  })

  it("property: hostile bodies never throw; each is a typed failure or a success", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), jsonText, fc.jsonValue().map((v) => JSON.stringify(v))), (text) => {
        const r = Envelope.decode(text)
        return Result.isSuccess(r) || typeof r.failure._tag === "string"
      }),
      { numRuns: 1000 }
    )
  })

  it("encodes envelopes with exact bigints", () => {
    assert.strictEqual(Envelope.encodeSuccess([{ id: 9007199254740993n }]), '{"code":1,"data":[{"id":9007199254740993}]}')
    assert.strictEqual(
      Envelope.encodeFailure({ errorCode: "ERR_429", message: "locked", data: { lockedSeconds: 5, unlockedAt: 10 } }),
      '{"code":0,"errorCode":"ERR_429","message":"locked","data":{"lockedSeconds":5,"unlockedAt":10}}'
    )
  })
})
