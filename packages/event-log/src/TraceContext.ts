/**
 * The trace context a record carries across the asynchronous hop from its append to its
 * readers (projection, plugins): the W3C `traceparent` of the span that appended it, kept in
 * the record's `meta` (docs/architecture.md §4.17). `meta` is an open object, so records
 * stored before this field existed simply have no context, and nothing about storage changed.
 *
 * Only sampled spans are written: an unsampled trace costs no bytes in the log.
 */
import { Context, Tracer } from "effect"
import type { LogRecord, Meta } from "./LogRecord.ts"

/**
 * Head sampling of the traces that start at an append path: true when a new trace is to be
 * exported. The server provides its ratio; without one every trace is kept. A hot path asks
 * it before making any span, so an unsampled delivery allocates nothing for tracing.
 */
export const HeadSampler = Context.Reference<() => boolean>("@ocs/event-log/TraceContext/HeadSampler", {
  defaultValue: () => () => true
})

/**
 * Span annotation of a root span whose creator already asked `HeadSampler`: a sampling
 * tracer keeps its decision instead of drawing again.
 */
export const Decided = Context.Reference<boolean>("@ocs/event-log/TraceContext/Decided", { defaultValue: () => false })

/** The `meta` key that holds the appending span's `traceparent`. */
export const metaKey = "traceparent"

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/** `00-<traceId>-<spanId>-<flags>` of a span. */
export const traceparent = (span: Tracer.AnySpan): string => `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

/** `meta` with the span's context added (callers add it for sampled spans only). */
export const inject = (meta: Meta | undefined, span: Tracer.AnySpan): Meta => ({ ...meta, [metaKey]: traceparent(span) })

/** The appending span of a record, when it carried one (a malformed value is ignored). */
export const fromRecord = (record: Pick<LogRecord, "meta">): Tracer.ExternalSpan | undefined => {
  const value = record.meta?.[metaKey]
  if (typeof value !== "string") return undefined
  const m = TRACEPARENT.exec(value)
  if (m === null) return undefined
  return Tracer.externalSpan({ traceId: m[1]!, spanId: m[2]!, sampled: (Number.parseInt(m[3]!, 16) & 1) === 1 })
}

/**
 * Links from a batch's span to the sampled appends of its records, one per distinct span.
 * A reader's span is sampled when it links to at least one sampled append, so a reader of an
 * untraced batch makes no span worth exporting.
 */
export const links = (records: ReadonlyArray<Pick<LogRecord, "meta" | "offset">>): Array<Tracer.SpanLink> => {
  const out: Array<Tracer.SpanLink> = []
  let seen: Set<string> | undefined
  for (const r of records) {
    if (r.meta === null || r.meta === undefined) continue
    const span = fromRecord(r)
    if (span === undefined || !span.sampled) continue
    seen ??= new Set()
    if (seen.has(span.spanId)) continue
    seen.add(span.spanId)
    out.push({ span, attributes: { "ocs.log.offset": r.offset } })
  }
  return out
}
