import { assert, describe, layer } from "@effect/vitest"
import { Ingestion } from "@ocs/ingestion"
import { Webhook } from "@ocs/protocol"
import { Effect, Result } from "effect"
import * as NodeCrypto from "node:crypto"
import * as Http from "node:http"
import { addApp, decisionsOf, envelope, hook, partialPost, post, recordsOf, receiverLayer, redacted, request, TestReceiver } from "./helpers.ts"

const TOKEN = "secret-token"

layer(receiverLayer(), { excludeTestServices: true })("Ingestion receiver", (it) => {
  describe("store, then answer", () => {
    it.effect("stores the exact body with its tenant and meta, then answers 200", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const body = ` {"event" : "orderAdd", "businessId": 9007199254740993123,\n "webhooksVerifyToken":"${TOKEN}",` +
          `"data":{"id":12345678901234567890,"price":1.10,"customerName":"Phở 🍜"}}\n`
        const reply = yield* post(yield* hook(appId), body, { headers: { "user-agent": "ocs-sender/1" } })
        assert.strictEqual(reply.status, 200)
        assert.deepStrictEqual(JSON.parse(reply.body), { ok: true })

        const [record, ...rest] = yield* recordsOf(appId)
        assert.strictEqual(rest.length, 0)
        // Every byte as received except the verify token's value.
        assert.strictEqual(record!.body, redacted(body))
        assert.notInclude(record!.body, TOKEN)
        assert.strictEqual(record!.businessId, "9007199254740993123")
        assert.strictEqual(record!.source, "webhook")
        assert.strictEqual(record!.type, "orderAdd")
        // The key's recipe is part of the stored data: it hashes the bytes as stored (the
        // token's value replaced), so that no key lets anyone test a token guess.
        const expectedKey = NodeCrypto.createHash("sha256").update(`${appId}\n`).update(redacted(body)).digest("hex")
        assert.strictEqual(record!.dedupeKey, `sha256-stored:${expectedKey}`)
        assert.isTrue(Math.abs(record!.receivedAt - Date.now()) < 60_000)
        assert.deepStrictEqual(record!.meta, {
          remoteAddress: "127.0.0.1",
          userAgent: "ocs-sender/1",
          contentLength: Buffer.byteLength(body),
          tokenSource: "body"
        })
        assert.notInclude(JSON.stringify(record!.meta), TOKEN)
      }))

    it.effect("takes the token from the Authorization header when the body has none (raw or Bearer)", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = yield* hook(appId)
        const noToken = (n: number) => JSON.stringify({ event: "productAdd", businessId: 1, data: { n } })
        assert.strictEqual((yield* post(url, noToken(1), { headers: { authorization: TOKEN } })).status, 200)
        assert.strictEqual((yield* post(url, noToken(2), { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200)
        assert.strictEqual((yield* post(url, noToken(3), { headers: { authorization: `Bearer wrong` } })).status, 401)
        // Every token a delivery presents must verify: a wrong body token is not rescued by the
        // header, nor a wrong header token by the body.
        const wrongInBody = envelope({ data: { n: 4 } }, "wrong")
        assert.strictEqual((yield* post(url, wrongInBody, { headers: { authorization: TOKEN } })).status, 401)
        assert.strictEqual((yield* post(url, envelope({ data: { n: 5 } }), { headers: { authorization: "wrong" } })).status, 401)
        const records = yield* recordsOf(appId)
        assert.deepStrictEqual(records.map((r) => r.meta["tokenSource"]), ["header", "header"])
        assert.notInclude(JSON.stringify(records.map((r) => r.meta)), TOKEN)
      }))

    it.effect("wrong, missing or non-string token: 401, nothing stored, counted", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = yield* hook(appId)
        const ingestion = yield* Ingestion.Ingestion
        const before = (yield* ingestion.metrics).rejected.unauthorized
        for (
          const body of [
            envelope({}, "secret-tokeN"),
            envelope({}, ""),
            envelope({}, `${TOKEN} `),
            JSON.stringify({ event: "orderAdd", businessId: 1 }),
            JSON.stringify({ event: "orderAdd", businessId: 1, webhooksVerifyToken: 123 }),
            JSON.stringify({ event: "orderAdd", businessId: 1, webhooksVerifyToken: null })
          ]
        ) {
          const reply = yield* post(url, body)
          assert.strictEqual(reply.status, 401, body)
          assert.strictEqual(JSON.parse(reply.body).error, "unauthorized")
        }
        assert.strictEqual((yield* recordsOf(appId)).length, 0)
        assert.strictEqual((yield* ingestion.metrics).rejected.unauthorized - before, 6)
      }))

    it.effect("accepts every token of a rotation, and stops accepting a removed one", () =>
      Effect.gen(function*() {
        const appId = yield* addApp(["old-token", "new-token"])
        const url = yield* hook(appId)
        assert.strictEqual((yield* post(url, envelope({ data: { n: 1 } }, "old-token"))).status, 200)
        assert.strictEqual((yield* post(url, envelope({ data: { n: 2 } }, "new-token"))).status, 200)
        const { apps } = yield* TestReceiver
        apps.set({ appId, verifyTokens: ["new-token"], enabled: true })
        assert.strictEqual((yield* post(url, envelope({ data: { n: 3 } }, "old-token"))).status, 401)
        assert.strictEqual((yield* post(url, envelope({ data: { n: 4 } }, "new-token"))).status, 200)
        assert.strictEqual((yield* recordsOf(appId)).length, 3)
      }))

    it.effect("unknown or disabled application: 404, nothing stored", () =>
      Effect.gen(function*() {
        const { apps } = yield* TestReceiver
        const unknown = "123456789"
        const reply = yield* post(yield* hook(unknown), envelope({}))
        assert.strictEqual(reply.status, 404)
        assert.strictEqual(JSON.parse(reply.body).error, "unknown_app")
        const appId = yield* addApp()
        apps.set({ appId, verifyTokens: [TOKEN], enabled: false })
        assert.strictEqual((yield* post(yield* hook(appId), envelope({}))).status, 404)
        assert.strictEqual((yield* recordsOf(unknown)).length + (yield* recordsOf(appId)).length, 0)
      }))
  })

  describe("bodies", () => {
    it.effect("bad JSON, invalid UTF-8, empty or too deep: 400 with a clear message, nothing stored", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = yield* hook(appId)
        const cases: ReadonlyArray<readonly [string | Uint8Array, RegExp]> = [
          [`{"event":"orderAdd","webhooksVerifyToken":"${TOKEN}"`, /invalid JSON/],
          [`{"event":"orderAdd",}`, /invalid JSON/],
          ["", /empty body/],
          [Buffer.concat([Buffer.from(`{"event":"orderAdd","webhooksVerifyToken":"${TOKEN}","x":"`), Buffer.from([0xc3, 0x28]), Buffer.from(`"}`)]), /not valid UTF-8/],
          [`{"event":"orderAdd","webhooksVerifyToken":"${TOKEN}","x":${"[".repeat(300)}${"]".repeat(300)}}`, /nested deeper/]
        ]
        for (const [body, message] of cases) {
          const reply = yield* post(url, body)
          assert.strictEqual(reply.status, 400)
          const answer = JSON.parse(reply.body)
          assert.strictEqual(answer.error, "bad_json")
          assert.match(answer.message, message)
        }
        assert.strictEqual((yield* recordsOf(appId)).length, 0)
      }))

    it.effect("not an object, no event string, or a businessId that is not an exact integer: 400", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = yield* hook(appId)
        const t = `"webhooksVerifyToken":"${TOKEN}"`
        for (
          const body of [
            `[{"event":"orderAdd",${t}}]`,
            `"orderAdd"`,
            `{${t}}`,
            `{"event":42,${t}}`,
            `{"event":"",${t}}`,
            `{"event":"orderAdd","businessId":1.5,${t}}`,
            `{"event":"orderAdd","businessId":9007199254740993.5,${t}}`,
            `{"event":"orderAdd","businessId":1e3,${t}}`,
            `{"event":"orderAdd","businessId":1e400,${t}}`,
            `{"event":"orderAdd","businessId":-7,${t}}`,
            `{"event":"orderAdd","businessId":"12a",${t}}`,
            `{"event":"orderAdd","businessId":true,${t}}`,
            `{"event":"orderAdd","businessId":{},${t}}`
          ]
        ) {
          // The token in the header authenticates bodies that cannot carry it.
          const reply = yield* post(url, body, { headers: { authorization: TOKEN } })
          assert.strictEqual(reply.status, 400, body)
          assert.strictEqual(JSON.parse(reply.body).error, "bad_envelope", body)
        }
        assert.strictEqual((yield* recordsOf(appId)).length, 0)
      }))

    it.effect("unknown event names are stored; businessId as a digit string is canonical", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = yield* hook(appId)
        assert.strictEqual((yield* post(url, envelope({ event: "warrantySlipAdd", data: { slip: 1 } }))).status, 200)
        assert.strictEqual((yield* post(url, envelope({ businessId: "12345678901234567890" }))).status, 200)
        assert.strictEqual((yield* post(url, envelope({ businessId: "007" }))).status, 400)
        const records = yield* recordsOf(appId)
        assert.deepStrictEqual(records.map((r) => [r.type, r.businessId]), [["warrantySlipAdd", "42"], ["orderAdd", "12345678901234567890"]])
      }))

    it.effect("webhooksEnabled has no businessId: recorded with businessId null and its registeredEvents", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const body = JSON.stringify({
          event: "webhooksEnabled",
          webhooksVerifyToken: TOKEN,
          data: { registeredEvents: { "101": "productAdd", "110": "inventoryChange", "202": "orderUpdate" } }
        })
        assert.strictEqual((yield* post(yield* hook(appId), body)).status, 200)
        const [record] = yield* recordsOf(appId)
        assert.strictEqual(record!.type, "webhooksEnabled")
        assert.isNull(record!.businessId)
        const delivery = Webhook.decodeText(record!.body)
        assert.isTrue(Result.isSuccess(delivery))
        if (Result.isSuccess(delivery) && delivery.success.event === "webhooksEnabled") {
          assert.deepStrictEqual((delivery.success.data as { registeredEvents?: unknown }).registeredEvents, { "101": "productAdd", "110": "inventoryChange", "202": "orderUpdate" })
        } else assert.fail("not decoded as webhooksEnabled")
      }))

    it.effect("a body of exactly the limit is stored", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const head = envelope({ pad: "" })
        const body = head.replace(`"pad":""`, `"pad":"${"x".repeat(1024 * 1024 - Buffer.byteLength(head))}"`)
        assert.strictEqual(Buffer.byteLength(body), 1024 * 1024)
        assert.strictEqual((yield* post(yield* hook(appId), body)).status, 200)
        assert.strictEqual((yield* recordsOf(appId))[0]!.body, redacted(body))
      }))

    it.effect("a declared Content-Length over 1 MiB: 413 at once, without reading the body; connection closed", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = new URL(yield* hook(appId))
        // Send only the head and a little of the body: the answer must not wait for the rest.
        const answer = yield* partialPost(url.href, 1024 * 1024 + 1, `{"event":"orderAdd"`)
        assert.deepStrictEqual([answer.status, answer.connection], [413, "close"])
        assert.strictEqual((yield* recordsOf(appId)).length, 0)
      }))

    it.effect("a chunked body growing past 1 MiB: 413, nothing stored", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = new URL(yield* hook(appId))
        const status = yield* Effect.promise(() =>
          new Promise<number>((resolve, reject) => {
            const req = Http.request(url, { method: "POST", headers: { "transfer-encoding": "chunked" } }, (res) => {
              resolve(res.statusCode ?? 0)
              res.resume()
            })
            req.on("error", (e) => (req.writableEnded ? undefined : reject(e)))
            const chunk = Buffer.alloc(64 * 1024, "a")
            let sent = 0
            const pump = () => {
              while (sent < 2 * 1024 * 1024) {
                sent += chunk.length
                if (!req.write(chunk)) return void req.once("drain", pump)
              }
              req.end()
            }
            req.write(`{"event":"orderAdd","webhooksVerifyToken":"${TOKEN}","pad":"`)
            pump()
          })
        )
        assert.strictEqual(status, 413)
        assert.strictEqual((yield* recordsOf(appId)).length, 0)
      }))
  })

  describe("dedupe", () => {
    it.effect("a redelivery of the same body is answered 200 and not appended again; the log keeps the decision", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = yield* hook(appId)
        const ingestion = yield* Ingestion.Ingestion
        const before = yield* ingestion.metrics
        const body = envelope({ data: { id: 77 } })
        const first = yield* post(url, body)
        const second = yield* post(url, body)
        const third = yield* post(url, body)
        assert.deepStrictEqual([first.status, second.status, third.status], [200, 200, 200])
        assert.deepStrictEqual(JSON.parse(second.body), { ok: true, duplicate: true })
        assert.strictEqual((yield* post(url, envelope({ data: { id: 78 } }))).status, 200)

        const records = yield* recordsOf(appId)
        assert.deepStrictEqual(records.map((r) => r.body), [redacted(body), redacted(envelope({ data: { id: 78 } }))])
        const decisions = yield* decisionsOf(appId)
        assert.deepStrictEqual(decisions.map((d) => [d.tenant, d.reason, d.original]), [
          [`${appId}:42`, "dedupeKey", records[0]!.offset],
          [`${appId}:42`, "dedupeKey", records[0]!.offset]
        ])
        const after = yield* ingestion.metrics
        assert.strictEqual(after.duplicates - before.duplicates, 2)
        assert.strictEqual(after.accepted - before.accepted, 2)
      }))

    it.effect("the same body for two applications is two facts", () =>
      Effect.gen(function*() {
        const a = yield* addApp()
        const b = yield* addApp()
        const body = envelope({ data: { id: 5 } })
        assert.strictEqual((yield* post(yield* hook(a), body)).body, `{"ok":true}`)
        assert.strictEqual((yield* post(yield* hook(b), body)).body, `{"ok":true}`)
      }))
  })

  describe("paths and methods: never a redirect", () => {
    it.effect("exact paths only; other methods 405 with Allow; nothing stored", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const { url } = yield* TestReceiver
        const cases: ReadonlyArray<readonly [string, string, number]> = [
          ["POST", `/webhooks/${appId}/`, 404],
          ["POST", `/webhooks/${appId}/x`, 404],
          ["POST", `/webhooks//${appId}`, 404],
          ["POST", `/webhooks/`, 404],
          ["POST", `/webhooks`, 404],
          ["POST", `/Webhooks/${appId}`, 404],
          ["POST", `/webhooks/0${appId}`, 404],
          ["POST", `/webhooks/app`, 404],
          ["POST", `/`, 404],
          ["GET", `/webhooks/${appId}`, 405],
          ["PUT", `/webhooks/${appId}`, 405],
          ["HEAD", `/webhooks/${appId}`, 405],
          ["GET", `/webhooks/${appId}/`, 404]
        ]
        for (const [method, path, status] of cases) {
          const reply = yield* Effect.promise(() => request(`${url}${path}`, method === "POST" || method === "PUT" ? envelope({}) : undefined, { method }))
          assert.strictEqual(reply.status, status, `${method} ${path}`)
          assert.isUndefined(reply.headers.location)
          if (status === 405) assert.strictEqual(reply.headers.allow, "POST")
        }
        assert.strictEqual((yield* recordsOf(appId)).length, 0)
        // A query string does not change the path.
        assert.strictEqual((yield* post(`${url}/webhooks/${appId}?retry=1`, envelope({}))).status, 200)
      }))
  })

  describe("metrics", () => {
    it.effect("counts received, accepted, rejected by reason, and latency; as Prometheus lines", () =>
      Effect.gen(function*() {
        const ingestion = yield* Ingestion.Ingestion
        const appId = yield* addApp()
        const url = yield* hook(appId)
        const before = yield* ingestion.metrics
        yield* post(url, envelope({ data: { m: 1 } }))
        yield* post(url, envelope({ data: { m: 2 } }, "nope"))
        yield* post(url, "{")
        yield* post((yield* TestReceiver).url + "/nope", "{}")
        const after = yield* ingestion.metrics
        assert.strictEqual(after.received - before.received, 4)
        assert.strictEqual(after.accepted - before.accepted, 1)
        assert.strictEqual(after.rejected.unauthorized - before.rejected.unauthorized, 1)
        assert.strictEqual(after.rejected.bad_json - before.rejected.bad_json, 1)
        assert.strictEqual(after.rejected.not_found - before.rejected.not_found, 1)
        assert.strictEqual(after.latencyMillis.count - before.latencyMillis.count, 4)
        assert.strictEqual(after.latencyMillis.buckets.at(-1)!.count, after.latencyMillis.count)

        const text = yield* ingestion.prometheus
        assert.include(text, "# TYPE ocs_ingestion_received_total counter")
        assert.include(text, `ocs_ingestion_received_total ${after.received}\n`)
        assert.include(text, `ocs_ingestion_rejected_total{reason="unauthorized"} ${after.rejected.unauthorized}\n`)
        assert.include(text, `ocs_ingestion_latency_ms_bucket{le="+Inf"} ${after.latencyMillis.count}\n`)
        assert.match(text, /ocs_ingestion_latency_ms_count \d+\n/)
        // Success per application: the stored one, and the one with a wrong token.
        assert.include(text, `ocs_webhooks_total{app_id="${appId}",outcome="ok"} 1\n`)
        assert.include(text, `ocs_webhooks_total{app_id="${appId}",outcome="failed"} 2\n`)
      }))
  })
})
