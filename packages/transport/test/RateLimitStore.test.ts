import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { RateLimitStore } from "../src/RateLimitStore.ts"

const tempFile = () => Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "ocs-ratelimit-")), "limits.sqlite")

const withStore = <A, E>(filename: string, f: (store: RateLimitStore["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(RateLimitStore, f).pipe(Effect.provide(RateLimitStore.layerSqlite({ filename })))

describe("RateLimitStore (SQLite)", () => {
  it.effect("keeps locks and in-window calls across a reopen; unknown completions count as now", () =>
    Effect.gen(function*() {
      const filename = tempFile()
      yield* withStore(filename, (store) =>
        Effect.gen(function*() {
          yield* store.write({
            grants: [
              { id: 1, key: "a", limit: 10, windowMs: 1000, at: 1000 },
              { id: 2, key: "a", limit: 10, windowMs: 1000, at: 1100 },
              { id: 3, key: "b", limit: 5, windowMs: 1000, at: 100 }
            ],
            completions: [{ id: 1, at: 1050 }, { id: 3, at: 150 }]
          })
          yield* store.lock("c", 99_000)
          yield* store.lock("c", 50_000) // never shortens a lock
        }))
      const loaded = yield* withStore(filename, (store) => store.load(1900))
      const byKey = Object.fromEntries(loaded.map((k) => [k.key, k]))
      assert.deepStrictEqual(byKey["a"]!.completions, [1050, 1900])
      assert.strictEqual(byKey["b"], undefined, "b's only call left the window")
      assert.strictEqual(byKey["c"]!.lockedUntil, 99_000)
    }))
})
