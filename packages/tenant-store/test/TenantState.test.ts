/**
 * The cached application lookup that every webhook delivery goes through: it answers from memory
 * (never touching the file, which a stalled disk could freeze), at once with this store's own
 * changes, and within its refresh interval with another connection's (another server process, an
 * admin tool), removals included.
 * Then: files written before the store had migrations, and timestamps from the Clock.
 */
import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Context, Effect, Layer, Option, Redacted, Result } from "effect"
import { TestClock } from "effect/testing"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { makeSealer } from "@ocs/tenant-store/Secrets"
import { Notices, SyncState } from "@ocs/sync"
import * as TenantState from "@ocs/tenant-store/TenantState"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { TenantDatabase } from "@ocs/tenant-store/TenantDatabase"
import * as Os from "node:os"

const sealer = makeSealer(Buffer.alloc(32, 9))

const REFRESH_MILLIS = 50

/** Two stores (two connections) on one file, as two server processes would have. */
const twoStores = Effect.gen(function*() {
  const filename = Path.join(tempDir("ocs-tenants-"), "tenants.sqlite")
  const open = () =>
    Layer.build(TenantRegistry.layer({ sealer, refreshMillis: REFRESH_MILLIS }).pipe(Layer.provideMerge(TenantDatabase.layer({ filename })))).pipe(
      Effect.map((ctx) => ({ registry: Context.get(ctx, TenantRegistry), file: Context.get(ctx, TenantDatabase) }))
    )
  const a = yield* open()
  const b = yield* open()
  return { a: a.registry, b: b.registry, fileOfA: a.file }
})

/** `f`'s answer once it equals `expected`, within a few refresh intervals. */
const within = <A>(f: () => A, expected: A) =>
  Effect.gen(function*() {
    const until = Date.now() + 40 * REFRESH_MILLIS
    while (Date.now() < until) {
      try {
        assert.deepStrictEqual(f(), expected)
        return
      } catch {
        yield* Effect.sleep(REFRESH_MILLIS / 5)
      }
    }
    assert.deepStrictEqual(f(), expected)
  })

const tokensOf = (store: TenantRegistry["Service"], appId: string) => {
  const found = store.appCached(appId)
  assert.isTrue(Result.isSuccess(found))
  const app = Option.getOrUndefined(Result.getOrThrow(found))
  return app === undefined ? undefined : { enabled: app.enabled, tokens: app.verifyTokens.map(Redacted.value) }
}

describe("TenantRegistry.appCached", () => {
  it.live("sees changes made through the same store, at once", () =>
    Effect.scoped(Effect.gen(function*() {
      const { a } = yield* twoStores
      assert.strictEqual(tokensOf(a, "7"), undefined)
      yield* a.upsertApp("7", ["old"])
      assert.deepStrictEqual(tokensOf(a, "7"), { enabled: true, tokens: ["old"] })
      // Rotation: both tokens, then only the new one, then disabled.
      yield* a.upsertApp("7", ["old", "new"])
      assert.deepStrictEqual(tokensOf(a, "7"), { enabled: true, tokens: ["old", "new"] })
      yield* a.upsertApp("7", ["new"], false)
      assert.deepStrictEqual(tokensOf(a, "7"), { enabled: false, tokens: ["new"] })
      yield* a.removeApp("7")
      assert.strictEqual(tokensOf(a, "7"), undefined)
    })))

  it.live("sees changes another connection committed to the file, within its refresh interval", () =>
    Effect.scoped(Effect.gen(function*() {
      const { a, b } = yield* twoStores
      yield* a.upsertApp("8", ["first"])
      assert.deepStrictEqual(tokensOf(a, "8"), { enabled: true, tokens: ["first"] })
      yield* b.upsertApp("8", ["second"])
      yield* within(() => tokensOf(a, "8"), { enabled: true, tokens: ["second"] })
      yield* b.upsertBusiness({ appId: "8", businessId: "80", accessToken: "x" })
      yield* within(() => a.isRegistered("8", "80"), true)
      yield* b.removeApp("8")
      yield* within(() => tokensOf(a, "8"), undefined)
      yield* within(() => a.isRegistered("8", "80"), false)
      yield* b.upsertApp("8", ["third"])
      yield* within(() => tokensOf(a, "8"), { enabled: true, tokens: ["third"] })
    })))

  it.live("answers without touching the file: it still answers once the connection is closed", () =>
    Effect.scoped(Effect.gen(function*() {
      const { a, fileOfA } = yield* twoStores
      yield* a.upsertApp("5", ["t5"])
      yield* a.upsertBusiness({ appId: "5", businessId: "50", accessToken: "x" })
      // A read of the file now throws (the connection is closed), as a read on a stalled disk
      // would hang: the webhook path and the projection's question must not make one.
      fileOfA.client.close()
      assert.deepStrictEqual(tokensOf(a, "5"), { enabled: true, tokens: ["t5"] })
      assert.strictEqual(tokensOf(a, "6"), undefined, "a miss is a miss, not a read")
      assert.isTrue(a.isRegistered("5", "50"))
      assert.isFalse(a.isRegistered("5", "51"))
      // The refresh fails (closed file) and keeps what memory has.
      yield* Effect.sleep(3 * REFRESH_MILLIS)
      assert.deepStrictEqual(tokensOf(a, "5"), { enabled: true, tokens: ["t5"] })
    })))

  it.live("returns the same object while nothing changed, and agrees with the uncached read", () =>
    Effect.scoped(Effect.gen(function*() {
      const { a } = yield* twoStores
      yield* a.upsertApp("9", ["t"])
      const first = Result.getOrThrow(a.appCached("9"))
      const second = Result.getOrThrow(a.appCached("9"))
      assert.strictEqual(Option.getOrThrow(first), Option.getOrThrow(second))
      const read = yield* a.app("9")
      assert.deepStrictEqual(Option.getOrThrow(read).verifyTokens.map(Redacted.value), ["t"])
    })))
})

/** The three stores over one file: the registry, the sync state and the notices. */
const openStore = (filename: string) =>
  Layer.build(TenantState.layer({ filename, sealer })).pipe(Effect.map((ctx) => ({
    registry: Context.get(ctx, TenantRegistry),
    syncState: Context.get(ctx, SyncState.SyncStateStore),
    notices: Context.get(ctx, Notices.Notices)
  })))

describe("the tenant store over a file from an earlier release", () => {
  it.live("opens a file whose tables were created inline and reads its rows back", () =>
    Effect.scoped(Effect.gen(function*() {
      const filename = Path.join(tempDir("ocs-tenants-"), "tenants.sqlite")
      // The DDL the store ran at every open before it had migrations.
      const old = new Database(filename)
      old.pragma("journal_mode = WAL")
      old.exec(`
        CREATE TABLE IF NOT EXISTS apps (
          app_id TEXT PRIMARY KEY, verify_tokens TEXT NOT NULL, enabled INTEGER NOT NULL DEFAULT 1, created_at INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS businesses (
          app_id TEXT NOT NULL REFERENCES apps(app_id) ON DELETE CASCADE, business_id TEXT NOT NULL, access_token TEXT NOT NULL,
          version TEXT NOT NULL DEFAULT '3.0', permissions TEXT NOT NULL DEFAULT '[]', depots TEXT NOT NULL DEFAULT '[]',
          granted_at INTEGER, expires_at INTEGER, status TEXT NOT NULL DEFAULT 'active', attention_code TEXT, attention_message TEXT,
          attention_at INTEGER, last_webhook_at INTEGER, created_at INTEGER NOT NULL, PRIMARY KEY (app_id, business_id));
        CREATE TABLE IF NOT EXISTS resource_state (
          app_id TEXT NOT NULL, business_id TEXT NOT NULL, resource TEXT NOT NULL, paused_code TEXT, paused_message TEXT,
          paused_at INTEGER, cursor TEXT, full_started_at INTEGER, full_completed_at INTEGER, incremental_bound INTEGER,
          last_run_at INTEGER, pages INTEGER NOT NULL DEFAULT 0, records INTEGER NOT NULL DEFAULT 0, last_error TEXT,
          PRIMARY KEY (app_id, business_id, resource));
        CREATE TABLE IF NOT EXISTS recent_errors (
          id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, app_id TEXT NOT NULL, business_id TEXT, resource TEXT,
          tag TEXT NOT NULL, message TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS notices (
          app_id TEXT NOT NULL, business_id TEXT NOT NULL, kind TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (app_id, business_id, kind));
      `)
      old.prepare("INSERT INTO apps VALUES ('1001', ?, 1, 100)").run(sealer.seal(JSON.stringify(["verify-1"])))
      old.prepare(
        "INSERT INTO businesses (app_id, business_id, access_token, permissions, depots, granted_at, created_at) VALUES ('1001', '42', ?, '[\"product\"]', '[\"7\"]', 50, 100)"
      ).run(sealer.seal("access-42"))
      old.exec(`
        INSERT INTO resource_state (app_id, business_id, resource, cursor, pages, records) VALUES ('1001', '42', 'product', '{"page":3}', 3, 250);
        INSERT INTO recent_errors (at, app_id, business_id, resource, tag, message) VALUES (120, '1001', '42', 'order', 'ApiError', 'ERR_500');
        INSERT INTO notices VALUES ('1001', '42', 'expiry-7', 130);
      `)
      old.close()

      const { registry: store, syncState, notices } = yield* openStore(filename)
      assert.deepStrictEqual(tokensOf(store, "1001"), { enabled: true, tokens: ["verify-1"] })
      const business = Option.getOrThrow(yield* store.business("1001", "42"))
      assert.deepStrictEqual(
        [Redacted.value(business.accessToken), business.permissions, business.depots, business.grantedAt, business.status],
        ["access-42", ["product"], ["7"], 50, "active"]
      )
      const state = yield* syncState.state("1001", "42", "product")
      assert.deepStrictEqual([state.cursor, state.pages, state.records], ['{"page":3}', 3, 250])
      yield* syncState.update("1001", "42", "product", { cursor: null, addPages: 1 })
      assert.deepStrictEqual((yield* syncState.states("1001", "42")).map((s) => [s.resource, s.cursor, s.pages]), [["product", null, 4]])
      assert.deepStrictEqual((yield* notices.recentErrors()).map((e) => [e.at, e.tag, e.message]), [[120, "ApiError", "ERR_500"]])
      assert.isFalse(yield* notices.noticeOnce("1001", "42", "expiry-7"), "the notice recorded before is still there")
      // The old table's foreign key still cascades, now that every connection turns foreign keys on.
      yield* store.removeApp("1001")
      assert.deepStrictEqual(yield* store.businesses(), [])
    })))
})

describe("the tenant store's timestamps", () => {
  it.effect("come from the fiber's Clock: TestClock drives them", () =>
    Effect.scoped(Effect.gen(function*() {
      const filename = Path.join(tempDir("ocs-tenants-"), "tenants.sqlite")
      yield* TestClock.setTime(2_000_000)
      const { registry: store, syncState, notices } = yield* openStore(filename)
      yield* store.upsertApp("1001", ["t"])
      yield* store.upsertBusiness({ appId: "1001", businessId: "42", accessToken: "a" })
      yield* TestClock.adjust("1 minute")
      yield* store.setStatus("1001", "42", "attention", { code: "ERR_403", message: "regrant" })
      yield* syncState.pause("1001", "42", "order", { code: "ERR_INVALID_DEPOT_ID", message: "depot" })
      yield* notices.recordError({ appId: "1001", businessId: "42", resource: "order", tag: "ApiError", message: "ERR_403" })
      yield* notices.noticeOnce("1001", "42", "silence-1")
      const business = Option.getOrThrow(yield* store.business("1001", "42"))
      assert.strictEqual(business.attention?.at, 2_060_000)
      assert.strictEqual((yield* syncState.state("1001", "42", "order")).paused?.at, 2_060_000)
      assert.deepStrictEqual((yield* notices.recentErrors()).map((e) => e.at), [2_060_000])
      const check = new Database(filename, { readonly: true })
      try {
        assert.deepStrictEqual(
          [
            (check.prepare("SELECT created_at AS t FROM apps").get() as { t: number }).t,
            (check.prepare("SELECT created_at AS t FROM businesses").get() as { t: number }).t,
            (check.prepare("SELECT at AS t FROM notices").get() as { t: number }).t
          ],
          [2_000_000, 2_000_000, 2_060_000]
        )
      } finally {
        check.close()
      }
      // The file holds sealed tokens: owner-only.
      assert.strictEqual((Fs.statSync(filename).mode & 0o777).toString(8), "600")
    })))
})

function tempDir(prefix: string): string {
  return Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
}
