/**
 * Unknown keys and the environment, on a small schema: a misspelt key is named with its path
 * and the nearest known name; OCS_ variables reach nested settings, and a comma list becomes an
 * array only where the schema wants one.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as ConfigFile from "../src/ConfigFile.ts"
import * as StrictKeys from "../src/StrictKeys.ts"

const Schema1 = Schema.Struct({
  server: Schema.Struct({ host: Schema.String, port: Schema.Int, allow: Schema.optional(Schema.Array(Schema.String)) }),
  name: Schema.optional(Schema.String)
})
const defaults = { server: { host: "127.0.0.1", port: 1 } }

describe("StrictKeys", () => {
  it("suggests only names close enough to be meant", () => {
    assert.strictEqual(StrictKeys.nearest("portt", ["host", "port", "limits"]), "port")
    assert.strictEqual(StrictKeys.nearest("DataDir", ["dataDir", "api"]), "dataDir")
    assert.strictEqual(StrictKeys.nearest("foo", ["server", "dataDir"]), undefined)
  })

  it("names every unknown key with its path", () => {
    const found = StrictKeys.unknownKeys(Schema1, { server: { host: "h", portt: 2 }, nmae: "x" }).map(StrictKeys.describe)
    assert.deepStrictEqual(found, ["`server.portt`: unknown key; did you mean `port`?", "`nmae`: unknown key; did you mean `name`?"])
  })
})

describe("ConfigFile.load", () => {
  it.effect("OCS_ variables override nested settings; a comma list is an array only where the schema wants one", () =>
    Effect.gen(function*() {
      const config = yield* ConfigFile.load(Schema1, {
        defaults,
        env: { OCS_SERVER__PORT: "9000", OCS_SERVER__ALLOW: "a, b", OCS_NAME: "x,y", OCS_CONFIG: "ignored", OCS_OTHER_TOOL: "1" }
      })
      assert.deepStrictEqual(config, { server: { host: "127.0.0.1", port: 9000, allow: ["a", "b"] }, name: "x,y" })
    }))

  it.effect("a misspelt variable below a known section is refused like a misspelt key", () =>
    Effect.gen(function*() {
      const message = yield* ConfigFile.load(Schema1, { defaults, env: { OCS_SERVER__PORTT: "1" } }).pipe(
        Effect.match({ onFailure: (e) => e.message, onSuccess: () => "" })
      )
      assert.include(message, "`server.portt`: unknown key; did you mean `port`?")
    }))
})
