/**
 * What the grant flow keeps: an application's secret key (sealed like the tokens, never in
 * the listing) and public URL, kept when an upsert does not name them; a business's pages.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
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
})
