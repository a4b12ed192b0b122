import { assert, layer } from "@effect/vitest"
import { Ingestion } from "@ocs/ingestion"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as Http from "node:http"
import { addApp, envelope, hook, post, receiverLayer, recordsOf, request } from "./helpers.ts"

const TOKEN = "secret-token"
const T = `"webhooksVerifyToken":"${TOKEN}"`
const utf8 = (s: string) => Buffer.from(s, "utf8")

/** Nesting past the parser's depth limit, inside an otherwise valid, authenticated envelope. */
const deep = fc.tuple(fc.integer({ min: 257, max: 3000 }), fc.integer({ min: 0, max: 2 })).map(([n, kind]) =>
  utf8(
    kind === 0
      ? `{"event":"orderAdd",${T},"data":${"[".repeat(n)}${"]".repeat(n)}}`
      : kind === 1
      ? `{"event":"orderAdd",${T},"data":${`{"a":`.repeat(n)}1${"}".repeat(n)}}`
      : "[".repeat(n)
  )
)

/** businessId values that are not exact non-negative integers (huge ones included). */
const badBusinessId = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)).map((d) => JSON.stringify(d)),
  fc.bigInt({ min: 2n ** 53n, max: 10n ** 40n }).map((b) => `${b}.5`),
  fc.bigInt({ min: 2n ** 53n, max: 10n ** 40n }).map((b) => `${b}.0`),
  fc.bigInt({ min: 1n, max: 10n ** 40n }).map((b) => `${b}e0`),
  fc.bigInt({ min: 1n, max: 10n ** 40n }).map((b) => `-${b}`),
  fc.constantFrom("1e400", "-1e400", "1E2", "-0", "0.0", "true", "false", "{}", "[]", "[1]", `{"id":1}`, `"1.5"`, `"-1"`, `""`, `" 1"`, `"01"`),
  fc.string().filter((s) => !/^(?:0|[1-9][0-9]*)$/.test(s)).map((s) => JSON.stringify(s))
).map((id) => utf8(`{"event":"orderAdd","businessId":${id},${T},"data":{"id":1}}`))

/** Wrong shapes: not an object, or an event that is not a non-empty string. */
const wrongTypes = fc.oneof(
  fc.constantFrom("null", "true", "0", `"orderAdd"`, `[]`, `[{"event":"orderAdd"}]`, `{}`).map(utf8),
  fc.constantFrom("1", "null", "true", `["orderAdd"]`, `{"name":"orderAdd"}`, `""`).map((e) => utf8(`{"event":${e},${T}}`)),
  fc.jsonValue().filter((v) => typeof v !== "string").map((v) => utf8(`{"event":${JSON.stringify(v)},"businessId":1,${T}}`)),
  fc.jsonValue().map((v) => utf8(JSON.stringify(v))) // no token at all
)

const INVALID_UTF8 = [[0xff], [0xfe], [0xc3, 0x28], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82], [0x80]]
const invalidUtf8 = fc.tuple(fc.string(), fc.constantFrom(...INVALID_UTF8), fc.string()).map(([a, bad, b]) =>
  Buffer.concat([utf8(`{"event":"orderAdd",${T},"businessId":1,"data":{"s":"${a.replace(/["\\]/g, "")}`), Buffer.from(bad), utf8(`${b.replace(/["\\]/g, "")}"}}`)])
)

/** A valid delivery cut short anywhere (a strict prefix of a JSON object is never valid). */
const truncated = fc.tuple(fc.jsonValue(), fc.nat()).map(([data, cut]) => {
  const full = JSON.stringify({ event: "orderAdd", businessId: 9007199254740991, webhooksVerifyToken: TOKEN, data })
  return utf8(full).subarray(0, cut % full.length)
})

/** Valid JSON, valid shape, wrong token (or the token in the wrong type). */
const wrongToken = fc.tuple(fc.string(), fc.jsonValue()).map(([token, data]) =>
  utf8(JSON.stringify({ event: "orderAdd", businessId: 1, webhooksVerifyToken: token === TOKEN ? `${token}x` : token, data }))
)

const garbage = fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b))

const hostile = fc.oneof(deep, badBusinessId, wrongTypes, invalidUtf8, truncated, wrongToken, garbage)

const N = 10_000
const CONCURRENCY = 16

// Throttling off: every hostile body comes from 127.0.0.1, and the fuzz is about what each
// one is answered once it is read (the throttle has its own tests in Throttle.test.ts).
layer(receiverLayer({ authFailures: false }), { excludeTestServices: true })("Ingestion fuzz", (it) => {
  it.effect(`${N} hostile bodies over keep-alive: all 4xx, nothing stored, no crash`, () =>
    Effect.gen(function*() {
      const appId = yield* addApp([TOKEN])
      const url = yield* hook(appId)
      const bodies = fc.sample(hostile, { numRuns: N, seed: 20240601 })
      const agent = new Http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
      const statuses = new Map<number, number>()
      const failures: Array<string> = []
      yield* Effect.promise(async () => {
        let next = 0
        const worker = async () => {
          while (next < bodies.length) {
            const body = bodies[next++]!
            try {
              const reply = await request(url, body, { agent })
              statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1)
              if (reply.status < 400 || reply.status >= 500) failures.push(`${reply.status} for ${body.toString("latin1").slice(0, 120)}`)
            } catch (e) {
              failures.push(`${String(e)} for ${body.toString("latin1").slice(0, 120)}`)
            }
          }
        }
        await Promise.all(Array.from({ length: CONCURRENCY }, worker))
      })
      agent.destroy()
      assert.deepStrictEqual(failures.slice(0, 5), [])
      assert.strictEqual([...statuses.values()].reduce((a, b) => a + b, 0), N)
      assert.strictEqual((yield* recordsOf(appId)).length, 0)
      // Still serving, and every rejection was counted.
      assert.strictEqual((yield* post(url, envelope({}, TOKEN))).status, 200)
      const metrics = yield* (yield* Ingestion.Ingestion).metrics
      const r = metrics.rejected
      assert.strictEqual(r.bad_json + r.bad_envelope + r.unauthorized, N)
      assert.isAbove(r.bad_json, 1000)
      assert.isAbove(r.bad_envelope, 1000)
      assert.isAbove(r.unauthorized, 1000)
    }), { timeout: 60_000 })
})
