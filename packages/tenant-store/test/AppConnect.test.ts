/**
 * What the grant flow keeps: an application's secret key (sealed like the tokens, never in
 * the listing) and public URL, kept when an upsert does not name them; a business's pages.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Notices, SyncTenants } from "@ocs/sync"
import * as Connect from "@ocs/tenant-store/Connect"
import * as TenantActivity from "@ocs/tenant-store/TenantActivity"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { makeSealer } from "@ocs/tenant-store/Secrets"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import * as TenantState from "@ocs/tenant-store/TenantState"

const sealer = makeSealer(Buffer.alloc(32, 7))
const SECRET = "sk_grant_flow_secret_0123456789abcdef"

describe("TenantRegistry: the grant flow's fields", () => {
  it.live("seals the secret key, keeps it across upserts that do not name it, never lists it", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "ocs-connect-"))
      const filename = Path.join(dir, "tenants.sqlite")
      const store = Context.get(yield* Layer.build(TenantState.layer({ filename, sealer })), TenantRegistry)
      yield* store.upsertApp("41", ["vt"], true, { secretKey: SECRET, publicUrl: "https://sync.example.com" })
      const app = Option.getOrThrow(yield* store.app("41"))
      assert.strictEqual(Redacted.value(app.secretKey!), SECRET)
      assert.strictEqual(app.publicUrl, "https://sync.example.com")
      assert.notInclude(String(app.secretKey), SECRET, "a Redacted value prints as <redacted>")

      // Rotating verify tokens keeps the secret key and URL; naming a new key replaces it.
      yield* store.upsertApp("41", ["vt", "vt2"])
      assert.strictEqual(Redacted.value(Option.getOrThrow(yield* store.app("41")).secretKey!), SECRET)
      assert.deepStrictEqual(yield* store.apps(), [{ appId: "41", enabled: true, connect: true, publicUrl: "https://sync.example.com" }])
      yield* store.upsertApp("42", ["vt"])
      assert.isNull(Option.getOrThrow(yield* store.app("42")).secretKey)

      yield* store.upsertBusiness({ appId: "41", businessId: "9", accessToken: "tok_x", permissions: ["product"], depots: ["1"], pages: ["p1", "p2"] })
      assert.deepStrictEqual(Option.getOrThrow(yield* store.business("41", "9")).pages, ["p1", "p2"])

      const bytes = Buffer.concat(Fs.readdirSync(dir).map((f) => Fs.readFileSync(Path.join(dir, f))))
      assert.isFalse(bytes.includes(Buffer.from(SECRET)), "the secret key is sealed at rest")
    })))

  it.effect("expiry warnings at 30, 7 and 1 days, and a hold for a refused token, carry the connect link", () =>
    Effect.scoped(Effect.gen(function*() {
      const DAY = 24 * 3600 * 1000
      const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "ocs-connect-expiry-"))
      const ctx = yield* Layer.build(TenantState.layer({ filename: Path.join(dir, "tenants.sqlite"), sealer }))
      const store = Context.get(ctx, TenantRegistry)
      const notices = Context.get(ctx, Notices.Notices)
      yield* store.upsertApp("51", ["vt"], true, { secretKey: SECRET, publicUrl: "https://sync.example.com/" })
      yield* store.upsertApp("52", ["vt"])
      yield* store.upsertBusiness({ appId: "51", businessId: "1", accessToken: "tok_a", expiresAt: 40 * DAY })
      yield* store.upsertBusiness({ appId: "52", businessId: "1", accessToken: "tok_b", expiresAt: 40 * DAY })
      const watch = TenantActivity.watchTenants(365 * DAY).pipe(Effect.provideContext(ctx))
      const tags = (appId: string) => Effect.map(notices.recentErrors(50, appId), (es) => es.map((e) => [e.tag, e.message] as const))
      yield* watch
      assert.deepStrictEqual(yield* tags("51"), [], "40 days ahead: nothing yet")
      for (const [day, tag] of [[10.5, "TokenExpiry30d"], [33.5, "TokenExpiry7d"], [39.5, "TokenExpiry1d"]] as const) {
        yield* TestClock.setTime(day * DAY)
        yield* watch
        yield* watch
        const seen = yield* tags("51")
        assert.strictEqual(seen.filter(([t]) => t === tag).length, 1, `${tag} once`)
        assert.include(seen.find(([t]) => t === tag)![1], "connect link: https://sync.example.com/connect/51")
      }
      // An application that cannot connect businesses itself: the warning, without a link.
      const other = yield* tags("52")
      assert.strictEqual(other.length, 3)
      assert.isTrue(other.every(([, m]) => !m.includes("connect link")))

      const sync = Context.get(ctx, SyncTenants.SyncTenants)
      yield* sync.hold("51", "1", { code: "ERR_INVALID_ACCESS_TOKEN", message: "access token was revoked" })
      const held = Option.getOrThrow(yield* store.business("51", "1"))
      assert.strictEqual(held.status, "attention")
      assert.strictEqual(held.attention?.message, "access token was revoked; connect link: https://sync.example.com/connect/51")
    })))
})

describe("Connect: the scopes of a grant as the service answers them", () => {
  it("an empty list or All (alone, in the list, or as a string) means every depot or page", () => {
    const decode = Schema.decodeUnknownSync(Connect.GrantData)
    const grant = (depotIds: unknown) => decode({ accessToken: "t", expiredAt: 1785603599, businessId: 110668, depotIds, pageIds: [] })
    assert.deepStrictEqual(Connect.scopeIds(grant([]).depotIds), [])
    assert.deepStrictEqual(Connect.scopeIds(grant("All").depotIds), [])
    assert.deepStrictEqual(Connect.scopeIds(grant(["All"]).depotIds), [])
    assert.deepStrictEqual(Connect.scopeIds(grant([1, "2", 12345678901234567890n]).depotIds), ["1", "2", "12345678901234567890"])
    assert.deepStrictEqual(Connect.scopeIds(grant("1, 2").depotIds), ["1", "2"])
    assert.deepStrictEqual(Connect.scopeIds(grant(undefined).depotIds), [])
  })
})
