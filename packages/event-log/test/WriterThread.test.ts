import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Stream } from "effect"
import * as NodePath from "node:path"
import * as Core from "../src/internal/sqliteLog.ts"
import { APP, tempDir, webhook } from "./helpers.ts"

describe("writer thread", () => {
  it.live("a dead writer thread fails appends with SqliteError, never acknowledges them", () =>
    Effect.scoped(Effect.gen(function*() {
      const filename = NodePath.join(tempDir(), "log.db")
      const core = yield* Core.make({ filename })
      const [first] = yield* core.service.append([webhook("1", `{"n":1}`)])
      assert.strictEqual(first?._tag, "Appended")

      // In flight while the thread dies, and after: both fail with the typed error.
      const inFlight = yield* Effect.forkChild(core.service.append([webhook("1", `{"n":2}`)]))
      yield* Effect.promise(() => core.killWriter())
      const during = yield* Fiber.await(inFlight)
      const after = yield* Effect.exit(core.service.append([webhook("1", `{"n":3}`)]))
      assert.isTrue(Exit.isFailure(after))
      if (Exit.isFailure(after)) assert.match(String(after.cause), /SqliteError/)
      const stored = yield* Stream.runCollect(core.service.read({ tenant: `${APP}:1` }))
      // The in-flight append either committed before the kill (acknowledged) or failed typed.
      if (Exit.isFailure(during)) {
        assert.match(String(during.cause), /SqliteError/)
      } else {
        assert.strictEqual(during.value[0]?._tag, "Appended")
      }
      assert.includeMembers(stored.map((r) => r.body), [`{"n":1}`])
      assert.notInclude(stored.map((r) => r.body), `{"n":3}`)
      // Reads still work on the main-thread connection.
      assert.isAtLeast(stored.length, 1)
    })))
})
