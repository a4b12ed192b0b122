/**
 * What `export` writes leaves nothing to attack: the output file is owner-only (0600, an
 * existing file's mode tightened), and a webhook's dedupe key of the earlier recipe (a SHA-256
 * over the bytes received, verify token included) is published re-keyed over the stored body,
 * so no exported key lets anyone test a token guess.
 */
import { EventLog, SqliteEventLog } from "@ocs/event-log"
import { DedupeKey } from "@ocs/ingestion"
import { Effect } from "effect"
import * as Crypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import { cli, tempDir } from "./fixture.ts"

const dir = tempDir()
afterAll(() => NodeFs.rmSync(dir, { recursive: true, force: true }))

const APP = "1001"
const TOKEN = "the-verify-token"
const received = `{"event":"productAdd","businessId":42,"webhooksVerifyToken":"${TOKEN}","data":{"id":1}}`
const stored = received.replace(`"${TOKEN}"`, `"[redacted]"`)
const legacy = `sha256:${Crypto.hash("sha256", `${APP}\n${received}`, "hex")}`

const writeLog = (filename: string) =>
  Effect.runPromise(Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    // As a server of the earlier release wrote it: the stored body redacted, the key over the token.
    yield* log.append([{ appId: APP, businessId: "42", source: "webhook", type: "productAdd", receivedAt: Date.UTC(2024, 0, 1), body: stored, dedupeKey: legacy }])
    yield* log.append([{ appId: APP, businessId: "42", source: "webhook", type: "productUpdate", receivedAt: Date.UTC(2024, 0, 2), body: stored.replace("productAdd", "productUpdate"), dedupeKey: DedupeKey.of(APP, stored.replace("productAdd", "productUpdate")) }])
  }).pipe(Effect.scoped, Effect.provide(SqliteEventLog.layer({ filename }))))

describe("export safety", () => {
  it("writes owner-only files and never an earlier-recipe dedupe key", async () => {
    const log = NodePath.join(dir, "events.sqlite")
    await writeLog(log)
    for (const format of ["ndjson", "csv"]) {
      const target = NodePath.join(dir, `export.${format}`)
      NodeFs.writeFileSync(target, "", { mode: 0o644 })
      NodeFs.chmodSync(target, 0o644)
      const r = await cli(["export", "--log", log, "--format", format, "--out", target])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.strictEqual(NodeFs.statSync(target).mode & 0o777, 0o600, `the ${format} export is owner-only`)
      const text = NodeFs.readFileSync(target, "utf8")
      assert.notInclude(text, legacy.slice("sha256:".length), `no ${format} key is a digest over the token`)
      assert.include(text, DedupeKey.of(APP, stored), "re-keyed over the stored body")
      assert.include(text, DedupeKey.of(APP, stored.replace("productAdd", "productUpdate")), "a current key as it is")
    }
    const fresh = NodePath.join(dir, "fresh.ndjson")
    assert.strictEqual((await cli(["export", "--log", log, "--out", fresh])).code, 0)
    assert.strictEqual(NodeFs.statSync(fresh).mode & 0o777, 0o600, "a new file is created owner-only")
  })
})
