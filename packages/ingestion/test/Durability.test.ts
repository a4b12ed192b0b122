import { assert, describe, layer } from "@effect/vitest"
import { EventLogError } from "@ocs/event-log"
import { Ingestion } from "@ocs/ingestion"
import { Effect } from "effect"
import { addApp, envelope, hook, post, receiverLayer, recordsOf, request, wrapAppend } from "./helpers.ts"

/** What the log in front of the real SQLite log does with the next appends. */
const control = {
  mode: "pass" as "pass" | "fail" | "hang" | "gate",
  gate: Promise.resolve()
}

const receiver = receiverLayer({ storeTimeoutMillis: 300 }, {
  wrapLog: (log) => wrapAppend(log, (batch) => {
      switch (control.mode) {
        case "fail":
          return Effect.fail(
            new EventLogError.SqliteError({ filename: "x", operation: "append", message: "disk I/O error", cause: null })
          )
        case "hang":
          return Effect.never
        case "gate":
          return Effect.flatMap(Effect.promise(() => control.gate), () => log.append(batch))
        case "pass":
          return log.append(batch)
      }
    })
})

layer(receiver, { excludeTestServices: true })("Ingestion durability", (it) => {
  describe("never 200 for an event that is not durable", () => {
    it.effect("a failing append: 503 with Retry-After, nothing stored, counted; the redelivery is stored", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = yield* hook(appId)
        const ingestion = yield* Ingestion.Ingestion
        const before = (yield* ingestion.metrics).rejected.store_failed
        const body = envelope({ data: { id: 1 } })
        control.mode = "fail"
        const reply = yield* post(url, body)
        control.mode = "pass"
        assert.strictEqual(reply.status, 503)
        assert.strictEqual(reply.headers["retry-after"], "1")
        assert.strictEqual(JSON.parse(reply.body).error, "store_failed")
        assert.strictEqual((yield* recordsOf(appId)).length, 0)
        assert.strictEqual((yield* ingestion.metrics).rejected.store_failed - before, 1)
        assert.isTrue(ingestion.storeHealth().failing, "a webhook sent now would not be stored")
        // The service's redelivery of the same body is not mistaken for a duplicate.
        assert.strictEqual((yield* post(url, body)).body, `{"ok":true}`)
        assert.strictEqual((yield* recordsOf(appId)).length, 1)
        assert.deepStrictEqual(ingestion.storeHealth(), { failing: false, failures: 0, since: null }, "healthy again with the first success")
      }))

    it.effect("an append that does not finish within storeTimeoutMillis: 503", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        control.mode = "hang"
        const reply = yield* post(yield* hook(appId), envelope({}))
        control.mode = "pass"
        assert.strictEqual(reply.status, 503)
        assert.strictEqual((yield* recordsOf(appId)).length, 0)
        assert.isTrue((yield* Ingestion.Ingestion).storeHealth().failing, "a stalled store counts as failing")
      }))

    it.effect("the answer waits for the commit", () =>
      Effect.gen(function*() {
        const appId = yield* addApp()
        const url = yield* hook(appId)
        let open = () => {}
        control.gate = new Promise<void>((resolve) => (open = resolve))
        control.mode = "gate"
        let answered = false
        const pending = request(url, envelope({})).then((r) => {
          answered = true
          return r
        })
        yield* Effect.sleep("150 millis")
        assert.isFalse(answered)
        assert.strictEqual((yield* recordsOf(appId)).length, 0)
        open()
        const reply = yield* Effect.promise(() => pending)
        control.mode = "pass"
        assert.strictEqual(reply.status, 200)
        assert.strictEqual((yield* recordsOf(appId)).length, 1)
      }))
  })
})

layer(receiverLayer({}, { dedupeWindowMillis: 50 }), { excludeTestServices: true })("Ingestion dedupe window", (it) => {
  it.effect("after the window a repeated body is a new fact", () =>
    Effect.gen(function*() {
      const appId = yield* addApp()
      const url = yield* hook(appId)
      const body = envelope({ data: { id: 9 } })
      assert.strictEqual((yield* post(url, body)).body, `{"ok":true}`)
      assert.strictEqual((yield* post(url, body)).body, `{"ok":true,"duplicate":true}`)
      yield* Effect.sleep("120 millis")
      assert.strictEqual((yield* post(url, body)).body, `{"ok":true}`)
      assert.strictEqual((yield* recordsOf(appId)).length, 2)
    }))
})
