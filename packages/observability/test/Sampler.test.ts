import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Tracer } from "effect"
import { TraceContext } from "@ocs/event-log"
import * as Telemetry from "../src/Telemetry.ts"

/** Effect's own tracer under the sampler: what `sampled` the spans get. */
const withSampler = <A, E>(ratio: number, effect: Effect.Effect<A, E>) =>
  effect.pipe(Effect.provideService(Tracer.Tracer, Telemetry.sampled(Tracer.nativeTracer, ratio)))

describe("the head sampler", () => {
  it.effect("keeps about `ratio` of the traces started here; a child follows its parent", () =>
    withSampler(0.1, Effect.gen(function*() {
      let roots = 0
      let childrenAgree = 0
      for (let i = 0; i < 5000; i++) {
        const [root, child] = yield* Effect.withSpan(
          Effect.flatMap(Effect.currentSpan, (parent) => Effect.map(Effect.withSpan(Effect.currentSpan, "child"), (c) => [parent, c] as const)),
          "root"
        )
        if (root.sampled) roots++
        if (child.sampled === root.sampled) childrenAgree++
      }
      // 5,000 draws at 10 %: the standard deviation is 0.4 %.
      assert.isAbove(roots / 5000, 0.07)
      assert.isBelow(roots / 5000, 0.13)
      assert.strictEqual(childrenAgree, 5000)
    })))

  it.effect("a linked root (a projection or plugin batch) keeps the caller's decision", () =>
    withSampler(0, Effect.gen(function*() {
      const link = { span: Tracer.externalSpan({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331" }), attributes: {} }
      const kept = yield* Effect.withSpan(Effect.currentSpan, "batch", { root: true, links: [link], sampled: true })
      const dropped = yield* Effect.withSpan(Effect.currentSpan, "batch", { root: true, links: [link], sampled: false })
      const plain = yield* Effect.withSpan(Effect.currentSpan, "pass", { root: true })
      assert.isTrue(kept.sampled)
      assert.isFalse(dropped.sampled)
      assert.isFalse(plain.sampled, "ratio 0 keeps no trace started here")
      // A root whose creator already asked the head sampler (the webhook path) keeps it.
      const decided = yield* Effect.withSpan(Effect.currentSpan, "webhook", { root: true, annotations: Context.make(TraceContext.Decided, true) })
      assert.isTrue(decided.sampled)
    })))
})
