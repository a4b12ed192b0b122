import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Telemetry from "../src/Telemetry.ts"

/** Runs `effect` with the server's logging at `level`, and returns the lines it wrote. */
const linesOf = (level: Parameters<typeof Telemetry.layerLogging>[0], effect: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const original = console.log
    console.log = (line: string) => lines.push(line)
    yield* effect.pipe(Effect.provide(Telemetry.layerLogging(level)), Effect.ensuring(Effect.sync(() => (console.log = original))))
    return lines.map((l) => JSON.parse(l) as Record<string, unknown>)
  })

const everyLevel = Effect.gen(function*() {
  yield* Effect.logDebug("d")
  yield* Effect.logInfo("i")
  yield* Effect.logWarning("w")
  yield* Effect.logError("e")
})

describe("server logging", () => {
  it.effect("the configured level drops the lines below it", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual((yield* linesOf("warning", everyLevel)).map((l) => l["message"]), ["w", "e"])
      assert.deepStrictEqual((yield* linesOf(undefined, everyLevel)).map((l) => l["message"]), ["i", "w", "e"])
      assert.deepStrictEqual((yield* linesOf("debug", everyLevel)).map((l) => l["message"]), ["d", "i", "w", "e"])
    }))

  it.effect("tenant and resource are lifted to the top; inside a span, its trace and span ids", () =>
    Effect.gen(function*() {
      const [line] = yield* linesOf(
        "info",
        Effect.logInfo("pass").pipe(Effect.annotateLogs({ tenant: "1:2", resource: "pos:/v3.0/product/list", pages: 3 }), Effect.withSpan("pass"))
      )
      assert.strictEqual(line!["tenant"], "1:2")
      assert.strictEqual(line!["resource"], "pos:/v3.0/product/list")
      assert.deepStrictEqual(line!["annotations"], { pages: 3 })
      assert.match(String(line!["traceId"]), /^[0-9a-f]{32}$/)
      assert.match(String(line!["spanId"]), /^[0-9a-f]{16}$/)
      assert.strictEqual(line!["level"], "INFO")
    }))
})
