import { assert, describe, it } from "@effect/vitest"
import { Tracer } from "effect"
import { TraceContext } from "@ocs/event-log"

const span = (spanId: string, sampled = true) => Tracer.externalSpan({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId, sampled })

describe("TraceContext", () => {
  it("round-trips the appending span through meta, keeping the other fields", () => {
    const meta = TraceContext.inject({ remoteAddress: "127.0.0.1" }, span("b7ad6b7169203331"))
    assert.strictEqual(meta["remoteAddress"], "127.0.0.1")
    assert.strictEqual(meta[TraceContext.metaKey], "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    const back = TraceContext.fromRecord({ meta })!
    assert.strictEqual(back.traceId, "0af7651916cd43dd8448eb211c80319c")
    assert.strictEqual(back.spanId, "b7ad6b7169203331")
    assert.isTrue(back.sampled)
  })

  it("a record without a context, or with a malformed one, has none", () => {
    assert.isUndefined(TraceContext.fromRecord({ meta: {} }))
    assert.isUndefined(TraceContext.fromRecord({ meta: { traceparent: "00-xyz-b7ad6b7169203331-01" } }))
    assert.isUndefined(TraceContext.fromRecord({ meta: { traceparent: 42 } }))
  })

  it("links: one per distinct sampled append, unsampled and absent ones skipped", () => {
    const a = TraceContext.inject(undefined, span("00000000000000aa"))
    const b = TraceContext.inject(undefined, span("00000000000000bb"))
    const off = TraceContext.inject(undefined, span("00000000000000cc", false))
    const links = TraceContext.links([
      { offset: 1, meta: a },
      { offset: 2, meta: a },
      { offset: 3, meta: {} },
      { offset: 4, meta: off },
      { offset: 5, meta: b }
    ])
    assert.deepStrictEqual(links.map((l) => [l.span.spanId, l.attributes["ocs.log.offset"]]), [["00000000000000aa", 1], ["00000000000000bb", 5]])
  })
})
