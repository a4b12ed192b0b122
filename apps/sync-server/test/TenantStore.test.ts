/**
 * The cached application lookup that every webhook delivery goes through: it must never
 * answer with tokens older than the file, whether the change came through this store, through
 * another connection (another server process, an admin tool), or removed the application.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted, Result } from "effect"
import * as Path from "node:path"
import { makeSealer } from "../src/Secrets.ts"
import { TenantStore } from "../src/TenantStore.ts"
import { tempDir } from "./processes.ts"

const sealer = makeSealer(Buffer.alloc(32, 9))

/** Two stores (two connections) on one file, as two server processes would have. */
const twoStores = Effect.gen(function*() {
  const filename = Path.join(tempDir("ocs-tenants-"), "tenants.sqlite")
  const open = () => Layer.build(TenantStore.layer({ filename, sealer })).pipe(Effect.map((ctx) => Context.get(ctx, TenantStore)))
  return { a: yield* open(), b: yield* open() }
})

const tokensOf = (store: TenantStore["Service"], appId: string) => {
  const found = store.appCached(appId)
  assert.isTrue(Result.isSuccess(found))
  const app = Option.getOrUndefined(Result.getOrThrow(found))
  return app === undefined ? undefined : { enabled: app.enabled, tokens: app.verifyTokens.map(Redacted.value) }
}

describe("TenantStore.appCached", () => {
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

  it.live("sees changes another connection committed to the file", () =>
    Effect.scoped(Effect.gen(function*() {
      const { a, b } = yield* twoStores
      yield* a.upsertApp("8", ["first"])
      assert.deepStrictEqual(tokensOf(a, "8"), { enabled: true, tokens: ["first"] })
      yield* b.upsertApp("8", ["second"])
      assert.deepStrictEqual(tokensOf(a, "8"), { enabled: true, tokens: ["second"] })
      yield* b.removeApp("8")
      assert.strictEqual(tokensOf(a, "8"), undefined)
      yield* b.upsertApp("8", ["third"])
      assert.deepStrictEqual(tokensOf(a, "8"), { enabled: true, tokens: ["third"] })
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
