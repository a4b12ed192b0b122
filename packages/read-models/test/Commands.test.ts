import { assert, describe, it } from "@effect/vitest"
import type { LogRecord } from "@ocs/event-log"
import { EngineRecordCommands, Ids } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { Effect, Option } from "effect"
import * as NodePath from "node:path"
import { appendAndProject, files, layer, tenant } from "./helpers.ts"

const record = (t: EngineRecordCommands.Transition, businessId = tenant.businessId): LogRecord.NewRecord => ({
  appId: tenant.appId,
  businessId,
  source: "system",
  type: EngineRecordCommands.COMMAND_TYPE,
  body: EngineRecordCommands.encode(t),
  dedupeKey: EngineRecordCommands.dedupeKey(Ids.tenantKey({ appId: tenant.appId, businessId }), t),
  meta: EngineRecordCommands.meta(t),
  entityId: t.command
})

const requested = (command: string, key: string): EngineRecordCommands.Transition => ({
  state: "requested",
  command,
  kind: "customer.add",
  payload: { name: "An", mobile: "0900000001" },
  requestedBy: { type: "admin" },
  idempotencyKey: key,
  fingerprint: `fp-${key}`
})

describe("commands projection", () => {
  it.live("given a request, a lost answer and a read-back, the row is confirmed with the id and what was seen", () => {
    const f = files()
    return Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      yield* appendAndProject([
        record(requested("c1", "k1")),
        record({ state: "sent", command: "c1", attempt: 1 }),
        record({ state: "inDoubt", command: "c1", attempt: 1, reason: { tag: "RequestTimeout", message: "no answer" } }),
        record({ state: "confirmed", command: "c1", entityId: "777", by: "readBack", evidence: "customer/list mobile=0900000001: id 777" }),
        record(requested("c2", "k2")),
        record({ state: "sent", command: "c2", attempt: 1 }),
        record({ state: "answered", command: "c2", attempt: 1, status: 200, body: `{"code":0,"errorCode":"ERR_INVALID_FORM_FIELDS"}` }),
        record({ state: "failed", command: "c2", attempt: 1, reason: { tag: "InvalidFormFields", code: "ERR_INVALID_FORM_FIELDS", message: "mobile" } })
      ])
      const c1 = Option.getOrThrow(yield* rm.command(tenant, "c1"))
      assert.strictEqual(c1.state, "confirmed")
      assert.strictEqual(c1.attempts, 1)
      assert.strictEqual(c1.entityId, "777")
      assert.strictEqual(c1.reason?.tag, "RequestTimeout")
      assert.strictEqual(c1.evidence, "customer/list mobile=0900000001: id 777")
      assert.deepStrictEqual(c1.payload, { name: "An", mobile: "0900000001" })
      const c2 = Option.getOrThrow(yield* rm.command(tenant, "c2"))
      assert.strictEqual(c2.state, "failed")
      assert.strictEqual(c2.lastAnswer, `{"code":0,"errorCode":"ERR_INVALID_FORM_FIELDS"}`)
      const failed = yield* rm.commands(tenant, { state: "failed" })
      assert.deepStrictEqual(failed.items.map((c) => c.id), ["c2"])
      assert.deepStrictEqual((yield* rm.commands(tenant, { idempotencyKey: "k1" })).items.map((c) => c.id), ["c1"])
      // A request repeated with its key is one record (the log's dedupe), so one row.
      yield* appendAndProject([record(requested("c3", "k1"))])
      assert.isTrue(Option.isNone(yield* rm.command(tenant, "c3")))
      // Another tenant sees none of them.
      assert.strictEqual((yield* rm.commands({ appId: tenant.appId, businessId: "42" })).items.length, 0)
      // Replay: a rebuild from the log gives the same rows.
      const rebuilt = NodePath.join(f.dir, "rebuilt.db")
      yield* rm.rebuild({ filename: rebuilt })
      const other = yield* Effect.scoped(Effect.flatMap(ReadModels.make({ filename: rebuilt }), (r) => Effect.zip(r.digest(), r.command(tenant, "c1"))))
      assert.deepStrictEqual(other[0], yield* rm.digest())
      assert.deepStrictEqual(other[1], Option.some(c1))
    }).pipe(Effect.provide(layer(f)))
  })
})
