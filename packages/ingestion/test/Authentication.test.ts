/**
 * The verify token is checked before the body is parsed, never stored, and sources that keep
 * failing it are answered 429, while their deliveries that prove the token are still stored.
 */
import { assert, describe, layer } from "@effect/vitest"
import { DedupeKey, Ingestion } from "@ocs/ingestion"
import { Effect } from "effect"
import * as Crypto from "node:crypto"
import { addApp, decisionsOf, envelope, hook, partialPost, post, recordsOf, receiverLayer, redacted } from "./helpers.ts"

const TOKEN = "secret-token"
const LIMIT = 3

/** Writes a request head and only part of a large body; resolves with the answer once the server closes. */
layer(receiverLayer({ authFailures: { limit: LIMIT, windowSeconds: 1 } }), { excludeTestServices: true })("verify token", (it) => {
  describe("checked before the body is parsed", () => {
    it.effect("a wrong token before invalid JSON is 401, not 400: the rest was never parsed", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = yield* hook(appId)
        const broken = `{"event":"orderAdd","webhooksVerifyToken":"wrong","data":{"id":1,,,]]] not json`
        const reply = yield* post(url, broken)
        assert.strictEqual(reply.status, 401, reply.body)
        // The same bytes with the right token are parsed, and refused as the JSON they are.
        const right = yield* post(url, broken.replace(`"wrong"`, `"${TOKEN}"`))
        assert.strictEqual(right.status, 400)
        assert.strictEqual(JSON.parse(right.body).error, "bad_json")
        // A wrong Authorization header is refused without even the scan: the body is garbage.
        assert.strictEqual((yield* post(url, "\u0000garbage", { headers: { authorization: "Bearer wrong" } })).status, 401)
        for (const answer of [reply.body, right.body]) assert.notInclude(answer, TOKEN)
        assert.strictEqual((yield* recordsOf(appId)).length, 0)
      }))

    it.effect("the token appearing twice at the top level is refused; nested ones are data", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = yield* hook(appId)
        const twice = `{"event":"orderAdd","businessId":1,"webhooksVerifyToken":"${TOKEN}","webhooksVerifyToken":"${TOKEN}"}`
        const reply = yield* post(url, twice)
        assert.strictEqual(reply.status, 400)
        assert.strictEqual(JSON.parse(reply.body).error, "bad_envelope")
        const nested = envelope({ data: { webhooksVerifyToken: "kept-as-data" } })
        assert.strictEqual((yield* post(url, nested)).status, 200)
        const [record] = yield* recordsOf(appId)
        assert.strictEqual(record!.body, redacted(nested))
        assert.include(record!.body, `"data":{"webhooksVerifyToken":"kept-as-data"}`)
      }))
  })

  describe("stored without the token", () => {
    it.effect("a leading byte order mark and a numeric businessId: stored with the BOM, the token's value replaced", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const text = ` { "event":"productAdd", "businessId" : 42 , "webhooksVerifyToken" : "${TOKEN}", "data":{"id":1,"name":"Phở"}}`
        const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])
        const reply = yield* post(yield* hook(appId), bytes)
        assert.strictEqual(reply.status, 200, reply.body)
        const [record] = yield* recordsOf(appId)
        assert.strictEqual(record!.businessId, "42")
        assert.strictEqual(record!.meta["utf8Bom"], true)
        const expected = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text.replace(`"${TOKEN}"`, `"[redacted]"`))])
        assert.isTrue(Buffer.from(record!.body, "utf8").equals(expected), "every other byte as received")
      }))

    it.effect("the dedupe key holds nothing of the token: a redelivery is a duplicate, under a rotated token too", () =>
      Effect.gen(function*() {
        const appId = yield* addApp([TOKEN, "rotated-token"])
        const url = yield* hook(appId)
        const body = envelope({ data: { id: 9 } })
        assert.strictEqual((yield* post(url, body)).body, `{"ok":true}`)
        assert.strictEqual((yield* post(url, body)).body, `{"ok":true,"duplicate":true}`)
        // Same content under the other valid token (a rotation): the same stored bytes, the same delivery.
        assert.strictEqual((yield* post(url, envelope({ data: { id: 9 } }, "rotated-token"))).body, `{"ok":true,"duplicate":true}`)
        const records = yield* recordsOf(appId)
        assert.strictEqual(records.length, 1)
        const key = records[0]!.dedupeKey!
        // The earlier recipe, a digest over the bytes received (token included), let anyone
        // holding a key test token guesses offline.
        assert.notStrictEqual(key, `sha256:${Crypto.hash("sha256", `${appId}\n${body}`, "hex")}`)
        assert.notInclude(key, Crypto.hash("sha256", `${appId}\n${body}`, "hex"))
        assert.strictEqual(key, DedupeKey.of(appId, redacted(body)), "a digest of the stored body")
        assert.strictEqual((yield* decisionsOf(appId)).length, 2)
      }))
  })

  describe("throttled sources", () => {
    it.effect(`after ${LIMIT} failures: wrong tokens 429 with retry-after, a delivery that proves its token still stored; over after the window`, () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const other = yield* addApp()
        const url = yield* hook(appId)
        const ingestion = yield* Ingestion.Ingestion
        const before = yield* ingestion.metrics
        for (let i = 0; i < LIMIT; i++) assert.strictEqual((yield* post(url, envelope({ data: { i } }, "wrong"))).status, 401)
        const wrong = yield* post(url, envelope({ data: { id: 0 } }, "wrong"))
        assert.strictEqual(wrong.status, 429, "a wrong token from the throttled source")
        assert.strictEqual(wrong.headers["retry-after"], "1")
        // A flood of wrong tokens from a shared address never blocks the real sender.
        assert.strictEqual((yield* post(url, envelope({ data: { id: 1 } }))).status, 200, "the token in the body")
        assert.strictEqual((yield* post(url, envelope({ data: { id: 2 } }), { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200, "the token in the header")
        // A wrong header token is answered before any byte of the body, and the connection closed.
        const header = yield* post(url, "\u0000garbage", { headers: { authorization: "Bearer wrong" } })
        assert.deepStrictEqual([header.status, header.headers["connection"]], [429, "close"])
        // A throttled source must show its token in the first bytes: a 1 MiB body without it in
        // the first 64 KiB is answered then, and the connection closed (the rest is not read).
        const large = yield* partialPost(url, 1024 * 1024, `{"event":"orderAdd","pad":"${"x".repeat(70 * 1024)}`)
        assert.deepStrictEqual(large, { status: 429, retryAfter: "1", connection: "close" })
        assert.strictEqual((yield* post(yield* hook(other), envelope({}))).status, 200, "another application from the same source")
        const after = yield* ingestion.metrics
        assert.strictEqual(after.rejected.throttled - before.rejected.throttled, 3)
        assert.strictEqual(after.rejected.unauthorized - before.rejected.unauthorized, LIMIT)
        assert.include(yield* ingestion.prometheus, `ocs_ingestion_rejected_total{reason="throttled"}`)
        assert.strictEqual((yield* recordsOf(appId)).length, 2)
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 1100)))
        assert.strictEqual((yield* post(url, envelope({ data: { id: 3 } }, "wrong"))).status, 401, "the window is over")
        assert.strictEqual((yield* recordsOf(appId)).length, 2)
      }))

    it.effect("a declared 1 MiB body with a wrong token still gets its 401 (no throttling yet) and nothing is stored", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const head = envelope({ pad: "" }, "wrong")
        const body = head.replace(`"pad":""`, `"pad":"${"x".repeat(1024 * 1024 - Buffer.byteLength(head))}"`)
        assert.strictEqual((yield* post(yield* hook(appId), body)).status, 401)
        assert.strictEqual((yield* recordsOf(appId)).length, 0)
      }))
  })
})
