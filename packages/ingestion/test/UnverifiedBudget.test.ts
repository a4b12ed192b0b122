/**
 * The memory held by bodies that have not proved a verify token is bounded: past the budget a
 * body is answered 503 at once, while deliveries that prove their token (in the header, or in
 * the first bytes found by the scan) are read and stored; the budget is given back when the
 * connections close.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Ingestion } from "@ocs/ingestion"
import { Effect } from "effect"
import * as Net from "node:net"
import { addApp, envelope, hook, post, recordsOf, receiverLayer } from "./helpers.ts"

const TOKEN = "secret-token"
const BUDGET = 256 * 1024
const PART = 100 * 1024

interface Held {
  readonly answer: Promise<string>
  readonly close: () => void
}

/** A request declaring `declared` bytes that sends `sent` and then holds the connection open. */
const hold = (url: string, declared: number, sent: string): Held => {
  const target = new URL(url)
  const socket = Net.connect(Number(target.port), target.hostname, () => {
    socket.write(`POST ${target.pathname} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n${sent}`)
  })
  socket.on("error", () => undefined)
  let text = ""
  socket.on("data", (d) => (text += d.toString()))
  const answer = new Promise<string>((ok) => socket.once("close", () => ok(text)))
  return { answer, close: () => socket.destroy() }
}

/** Polls until `f` holds (the server has read what the clients sent). */
const until = (what: string, f: () => boolean) =>
  Effect.promise(async () => {
    for (let i = 0; i < 500; i++) {
      if (f()) return
      await new Promise((r) => setTimeout(r, 10))
    }
    throw new Error(`never: ${what}`)
  })

const statusOf = (text: string) => Number(text.split(" ")[1])

layer(receiverLayer({ unverifiedBodyBudgetBytes: BUDGET }), { excludeTestServices: true })("unverified body budget", (it) => {
  describe("bodies without a proved token", () => {
    it.effect("past the budget: 503 with retry-after at once; proved deliveries still stored; the budget given back on close", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = yield* hook(appId)
        const ingestion = yield* Ingestion.Ingestion
        // Two bodies of 1 MiB declared, 100 KiB sent each, no token in it: held, counted.
        const pad = `{"event":"orderAdd","pad":"${"x".repeat(PART)}`
        const held = [hold(url, 1024 * 1024, pad), hold(url, 1024 * 1024, pad)]
        yield* until("both held", () => ingestion.unverifiedBytes() >= 2 * PART)
        // A third would pass the 256 KiB budget: refused at once, the connection closed.
        const third = yield* Effect.promise(() => hold(url, 1024 * 1024, pad).answer)
        assert.strictEqual(statusOf(third), 503, third)
        assert.match(third, /retry-after: 1/i)
        assert.match(third, /"error":"over_budget"/)
        assert.isBelow(ingestion.unverifiedBytes(), BUDGET + 1)

        // Meanwhile: a delivery with its token in the body (found by the scan) is stored, and so
        // is a large one whose token is in the header (never counted at all).
        assert.strictEqual((yield* post(url, envelope({ data: { id: 1 } }))).status, 200)
        const big = envelope({ data: { id: 2, pad: "y".repeat(300 * 1024) } })
        assert.strictEqual((yield* post(url, big, { headers: { authorization: TOKEN } })).status, 200)
        // The token near the start of a large body: proved by the scan, then read past the budget.
        const early = `{"webhooksVerifyToken":"${TOKEN}","event":"orderAdd","businessId":42,"data":{"pad":"${"z".repeat(400 * 1024)}"}}`
        assert.strictEqual((yield* post(url, early)).status, 200)
        assert.strictEqual((yield* recordsOf(appId)).length, 3)

        for (const h of held) h.close()
        yield* until("budget given back", () => ingestion.unverifiedBytes() === 0)
        const metrics = yield* ingestion.metrics
        assert.isAtLeast(metrics.rejected.over_budget, 1)
      }))

    it.effect("a wrong token in the first bytes is answered 401 before the rest arrives", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = yield* hook(appId)
        const ingestion = yield* Ingestion.Ingestion
        const h = hold(url, 1024 * 1024, `{"webhooksVerifyToken":"wrong","event":"orderAdd","pad":"${"x".repeat(10 * 1024)}`)
        const text = yield* Effect.promise(() => h.answer)
        assert.strictEqual(statusOf(text), 401, text)
        assert.match(text, /connection: close/i)
        assert.strictEqual(ingestion.unverifiedBytes(), 0)
        assert.strictEqual((yield* recordsOf(appId)).length, 0)
      }))
  })
})
