/**
 * `ocs-replay commands`: who changed what, from the log's command transitions, as a person and a
 * script would run it (a process, stdout, exit code).
 */
import { EventLog, SqliteEventLog } from "@ocs/event-log"
import { EngineRecordCommands, Ids } from "@ocs/protocol"
import { Effect } from "effect"
import * as NodePath from "node:path"
import { assert, beforeAll, describe, it } from "vitest"
import { APP, BIZ, cli, OTHER, P1, tempDir } from "./fixture.ts"

const T0 = Date.parse("2026-03-02T08:00:00Z")
let log: string

const rec = (businessId: string, t: EngineRecordCommands.Transition, at: number) => ({
  appId: APP,
  businessId,
  source: "system" as const,
  type: EngineRecordCommands.COMMAND_TYPE,
  receivedAt: at,
  body: EngineRecordCommands.encode(t),
  dedupeKey: EngineRecordCommands.dedupeKey(Ids.tenantKey({ appId: APP, businessId }), t),
  meta: EngineRecordCommands.meta(t),
  entityId: t.command
})

beforeAll(async () => {
  log = NodePath.join(tempDir(), "events.sqlite")
  const requested = (command: string, kind: string, payload: unknown, key: string, by: EngineRecordCommands.Requester): EngineRecordCommands.Transition =>
    ({ state: "requested", command, kind, payload, requestedBy: by, idempotencyKey: key, fingerprint: `fp-${key}` })
  await Effect.runPromise(Effect.gen(function*() {
    const eventLog = yield* EventLog.EventLog
    yield* eventLog.append([
      // A plugin edits a product; its answer is lost, the resend confirms it, the copy shows it.
      rec(BIZ, requested("c1", "product.edit", { id: P1, price: 12 }, "plugin:stock-mirror:e1:price", { type: "plugin", name: "stock-mirror" }), T0),
      rec(BIZ, { state: "sent", command: "c1", attempt: 1 }, T0 + 10),
      rec(BIZ, { state: "inDoubt", command: "c1", attempt: 1, reason: { tag: "RequestTimeout", message: "no answer" } }, T0 + 1500),
      rec(BIZ, { state: "sent", command: "c1", attempt: 2 }, T0 + 1600),
      rec(BIZ, { state: "answered", command: "c1", attempt: 2, status: 200, body: `{"code":1}`, entityId: P1 }, T0 + 1700),
      rec(BIZ, { state: "confirmed", command: "c1", by: "answer", entityId: P1 }, T0 + 1700),
      rec(BIZ, { state: "seen", command: "c1", by: "copy", evidence: "the copy shows product" }, T0 + 5000),
      // An admin's order, refused by the service.
      rec(BIZ, requested("c2", "order.add", { channel: { appOrderId: "web-9" } }, "k-2", { type: "admin" }), T0 + 60_000),
      rec(BIZ, { state: "sent", command: "c2", attempt: 1 }, T0 + 60_010),
      rec(BIZ, { state: "failed", command: "c2", attempt: 1, reason: { tag: "InvalidFormFields", code: "ERR_INVALID_FORM_FIELDS", message: "products" } }, T0 + 60_100),
      // Another tenant's command, cancelled before it was sent.
      rec(OTHER, requested("c3", "customer.add", { name: "An", mobile: "0900000001" }, "k-3", { type: "console" }), T0 + 120_000),
      rec(OTHER, { state: "cancelled", command: "c3", by: "admin" }, T0 + 120_500)
    ])
  }).pipe(Effect.scoped, Effect.provide(SqliteEventLog.layer({ filename: log, synchronous: "NORMAL" }))))
})

describe("ocs-replay commands", () => {
  it("one line per command: who asked, what, the entity, how it ended; per tenant or per entity", async () => {
    const all = await cli(["commands", "--log", log, "--format", "ndjson"])
    assert.strictEqual(all.code, 0, all.stderr)
    const lines = all.stdout.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))
    assert.deepStrictEqual(lines.map((l) => [l.id, l.kind, l.requestedBy, l.state, l.attempts]), [
      ["c1", "product.edit", "plugin:stock-mirror", "confirmed", 2],
      ["c2", "order.add", "admin", "failed", 1],
      ["c3", "customer.add", "console (cancelled by admin)", "cancelled", 0]
    ])
    assert.strictEqual(lines[0].entityId, P1)
    assert.strictEqual(lines[0].seen, "copy")
    assert.strictEqual(lines[0].reason, "RequestTimeout")
    assert.strictEqual(lines[1].reason, "InvalidFormFields ERR_INVALID_FORM_FIELDS")
    const tenant = await cli(["commands", "--log", log, "--tenant", `${APP}:${OTHER}`, "--format", "json"])
    assert.deepStrictEqual(JSON.parse(tenant.stdout).map((l: { id: string }) => l.id), ["c3"])
    const entity = await cli(["commands", "--log", log, "--tenant", `${APP}:${BIZ}`, "--entity", P1])
    assert.strictEqual(entity.code, 0, entity.stderr)
    assert.match(entity.stdout, /plugin:stock-mirror\s+product\.edit/)
    assert.match(entity.stdout, /\(1 command\)/)
    assert.notMatch(entity.stdout, /order\.add/)
  }, 60_000)
})
