/**
 * The server's telemetry, all of it Effect's own (docs/architecture.md §4.17):
 *
 * - metrics: one `Metric` registry per server (so two servers in one process never share a
 *   series), exported as Prometheus text on `/metrics` by `PrometheusMetrics`;
 * - traces: Effect's tracer, exported over OTLP/HTTP (JSON) by `OtlpTracer` when an endpoint
 *   is configured, with a ratio sampler for the traces that start here; off by default;
 * - logs: one JSON object a line, at the configured level, with the tenant, the resource and
 *   the trace and span ids lifted to the top.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Context, Effect, Layer, Logger, type LogLevel, Metric, Option, References, Schema, Tracer } from "effect"
import { TraceContext } from "@ocs/event-log"
import { OtlpExporter, OtlpSerialization, OtlpTracer } from "effect/observability"

/**
 * The `tracing` section of a server's configuration (docs/architecture.md §4.17). Off unless
 * `otlpEndpoint` is set: the base URL of an OTLP/HTTP collector (`/v1/traces` is appended).
 */
export const TracingSection = Schema.Struct({
  otlpEndpoint: Schema.optional(Schema.String),
  /** Share of traces started here that are exported, 0 to 1. Default 0.1. */
  sampleRatio: Schema.optional(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 }))),
  /** Default `ocs-sync-server`. */
  serviceName: Schema.optional(Schema.String),
  /** How often spans are sent; default 5 s (the key keeps the name configurations use). */
  exportIntervalMillis: Schema.optional(Schema.Finite.check(Schema.isGreaterThan(0)))
})
export type TracingSection = typeof TracingSection.Type

/** The defaults of `TracingSection`, written once. */
export const tracingDefaults = { sampleRatio: 0.1, serviceName: "ocs-sync-server", exportIntervalMillis: 5000 } as const

export type TracingOptions = TracingSection & { readonly otlpEndpoint: string }

/** The `logLevel` setting: lines below it are not written (default info). Every line is JSON. */
export const LogLevelSetting = Schema.Literals(["debug", "info", "warning", "error"])
export type LogLevelSetting = typeof LogLevelSetting.Type

/**
 * A head sampler around a tracer: a span that starts a trace is kept with probability
 * `ratio`; a child follows its parent; a root span with links (a projection or plugin batch
 * linked to the appends it read) is kept when the caller said so, which it does when one of
 * the linked appends was sampled. Unsampled spans are still made (ids for the logs) but never
 * exported.
 */
export const sampled = (tracer: Tracer.Tracer, ratio: number): Tracer.Tracer => {
  const sample = headSampler(ratio)
  return Tracer.make({
    span: (options) =>
      tracer.span(
        Option.isNone(options.parent) && options.links.length === 0 && options.sampled &&
          !Context.get(options.annotations, TraceContext.Decided)
          ? { ...options, sampled: sample() }
          : options
      ),
    ...(tracer.context === undefined ? {} : { context: tracer.context })
  })
}

/** True with probability `ratio`. */
export const headSampler = (ratio: number): () => boolean => ratio >= 1 ? () => true : ratio <= 0 ? () => false : () => Math.random() < ratio

/** Effect's OTLP tracer with the sampler, exporting JSON over HTTP. */
export const layerTracing = (options: TracingOptions): Layer.Layer<never> =>
  Layer.effect(
    Tracer.Tracer,
    Effect.map(
      OtlpTracer.make({
        url: `${options.otlpEndpoint.replace(/\/+$/, "")}/v1/traces`,
        resource: { serviceName: options.serviceName ?? tracingDefaults.serviceName },
        exportInterval: options.exportIntervalMillis ?? tracingDefaults.exportIntervalMillis,
        // Sent when this many wait, not only every interval: under load spans spend less
        // time in the buffer (this server runs with a small young generation).
        maxBatchSize: 512
      }),
      (tracer) => sampled(tracer, options.sampleRatio ?? tracingDefaults.sampleRatio)
    )
  ).pipe(
    // The webhook path asks the same sampler before it makes any span.
    Layer.merge(Layer.succeed(TraceContext.HeadSampler, headSampler(options.sampleRatio ?? tracingDefaults.sampleRatio))),
    Layer.provide([OtlpSerialization.layerJson, NodeHttpClient.layerUndici, OtlpExporter.layerFlusher])
  )

const lifted = ["tenant", "appId", "businessId", "resource", "operation", "plugin", "loop"] as const

/**
 * One JSON object a line: `timestamp`, `level`, `message`, the tenant and resource when the
 * line is about one (annotations `tenant`, `appId`, `businessId`, `resource`, ...), the
 * current `traceId` and `spanId` when a span is open, the other annotations, and the cause.
 */
export const jsonLogger: Logger.Logger<unknown, void> = Logger.make((options) => {
  const structured = Logger.formatStructured.log(options)
  const line: Record<string, unknown> = {
    timestamp: structured.timestamp,
    level: structured.level,
    message: structured.message
  }
  const annotations: Record<string, unknown> = { ...structured.annotations }
  for (const key of lifted) {
    if (key in annotations) {
      line[key] = annotations[key]
      delete annotations[key]
    }
  }
  const span = options.fiber.cache.span
  if (span !== undefined) {
    line["traceId"] = span.traceId
    line["spanId"] = span.spanId
  }
  if (Object.keys(annotations).length > 0) line["annotations"] = annotations
  if (Object.keys(structured.spans).length > 0) line["spans"] = structured.spans
  if (structured.cause !== undefined) line["cause"] = structured.cause
  globalThis.console.log(safeJson(line))
})

const safeJson = (value: unknown): string => {
  try {
    return JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v))
  } catch {
    return JSON.stringify({ message: String(value) })
  }
}

const levels: Record<LogLevelSetting, LogLevel.LogLevel> = {
  debug: "Debug",
  info: "Info",
  warning: "Warn",
  error: "Error"
}

/** The JSON logger at the configured level (default info). */
export const layerLogging = (logLevel: LogLevelSetting | undefined): Layer.Layer<never> =>
  Layer.mergeAll(
    Logger.layer([jsonLogger]),
    Layer.succeed(References.MinimumLogLevel, levels[logLevel ?? "info"])
  )

/** A registry of its own: the server's series, and no one else's. */
export const layerMetrics: Layer.Layer<never> = Layer.sync(Metric.MetricRegistry, () => new Map()) as Layer.Layer<never>

/** Metrics always; traces when an endpoint is configured. */
export const layer = (config: { readonly tracing?: TracingSection | undefined }): Layer.Layer<never> => {
  const endpoint = config.tracing?.otlpEndpoint
  return endpoint === undefined || endpoint === ""
    ? layerMetrics
    : Layer.merge(layerMetrics, layerTracing({ ...config.tracing, otlpEndpoint: endpoint }))
}
