/**
 * Counters and a latency histogram of the webhook receiver, as Effect `Metric`s in the
 * registry of the context the receiver was made in (the sync server exports that registry on
 * `/metrics`), and readable as a snapshot.
 *
 * Updated with `updateUnsafe` and a context captured once: they sit on the hot path of every
 * delivery, which runs no fiber.
 */
import { type Context, Metric } from "effect"

/** Why a request was not answered 200; one counter each. */
export const rejectReasons = [
  "not_found",
  "method",
  "forbidden_source",
  "unknown_app",
  "too_large",
  "bad_json",
  "bad_envelope",
  "unauthorized",
  /** 429: the source's recent deliveries failed the token check too often (body not read). */
  "throttled",
  /** 503: the bytes of bodies not yet proved by a token would pass the receiver's budget. */
  "over_budget",
  "store_failed",
  "apps_unavailable"
] as const
export type RejectReason = (typeof rejectReasons)[number]

/** Upper bounds (ms, inclusive) of the latency histogram; `+Inf` is implied. */
export const latencyBucketsMillis: ReadonlyArray<number> = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000]

export interface Snapshot {
  /** Every request that reached the receiver (including those rejected). */
  readonly received: number
  /** Answered 200 and appended as a new record. */
  readonly accepted: number
  /** Answered 200 as a redelivery of a record already in the log (not appended again). */
  readonly duplicates: number
  readonly rejected: Readonly<Record<RejectReason, number>>
  /**
   * Deliveries received whose data has a shape the reference does not document (a flat-depot
   * inventoryChange item), counted as they pass the envelope checks (a redelivery counts again):
   * kept in the log, flagged, not applied (docs/architecture.md §4.33).
   */
  readonly undocumented: number
  /** Time from request start to the answer, in ms; `buckets` are cumulative. */
  readonly latencyMillis: {
    readonly buckets: ReadonlyArray<{ readonly le: number; readonly count: number }>
    readonly sum: number
    readonly count: number
  }
}

/** What the receiver writes into. */
export interface Recorder {
  readonly received: () => void
  /** `appId`: the application the path named, when it named one. */
  readonly answered: (outcome: "accepted" | "duplicate" | RejectReason, latencyMillis: number, appId?: string) => void
  /** A delivery of an undocumented shape was received (`event`: its event name). */
  readonly undocumented: () => void
  readonly snapshot: () => Snapshot
}

const received = Metric.counter("ocs_ingestion_received_total", { description: "Webhook requests received.", incremental: true })
const accepted = Metric.counter("ocs_ingestion_accepted_total", { description: "Webhooks stored durably and answered 200.", incremental: true })
const duplicates = Metric.counter("ocs_ingestion_duplicates_total", { description: "Redeliveries answered 200 without a new record.", incremental: true })
const rejected = Object.fromEntries(rejectReasons.map((reason) => [
  reason,
  Metric.counter("ocs_ingestion_rejected_total", { description: "Webhook requests not answered 200, by reason.", attributes: { reason }, incremental: true })
])) as Record<RejectReason, Metric.Counter<number>>
const undocumented = Metric.counter("ocs_ingestion_undocumented_shape_total", {
  description: "Webhooks received whose data has a shape the reference does not document (kept and flagged, not applied; a redelivery counts again).",
  incremental: true
})
const latency = Metric.histogram("ocs_ingestion_latency_ms", {
  description: "Time from request start to answer, in milliseconds.",
  boundaries: latencyBucketsMillis
})

/**
 * Webhook outcomes per application (`ok`: stored or a redelivery, answered 200; `failed`:
 * anything else). Applications are few and configured, so `app_id` is a bounded label;
 * businesses (unbounded) never are.
 */
const byApp = new Map<string, { readonly ok: Metric.Counter<number>; readonly failed: Metric.Counter<number> }>()
const appCounters = (appId: string) => {
  let c = byApp.get(appId)
  if (c === undefined) {
    const make = (outcome: string) =>
      Metric.counter("ocs_webhooks_total", { description: "Webhook deliveries per application and outcome.", attributes: { app_id: appId, outcome }, incremental: true })
    c = { ok: make("ok"), failed: make("failed") }
    byApp.set(appId, c)
  }
  return c
}

export const makeRecorder = (context: Context.Context<never>): Recorder => {
  // Every series exists from the start, so a scrape shows zeros rather than nothing.
  for (const m of [received, accepted, duplicates, undocumented, ...Object.values(rejected)]) m.updateUnsafe(0, context)
  latency.valueUnsafe(context)
  return {
    received: () => received.updateUnsafe(1, context),
    answered: (outcome, latencyMillis, appId) => {
      if (outcome === "accepted") accepted.updateUnsafe(1, context)
      else if (outcome === "duplicate") duplicates.updateUnsafe(1, context)
      else rejected[outcome].updateUnsafe(1, context)
      latency.updateUnsafe(latencyMillis, context)
      // Only applications the receiver knows: a path naming an unknown one is no series.
      if (appId !== undefined && outcome !== "unknown_app" && outcome !== "not_found") {
        const c = appCounters(appId)
        ;(outcome === "accepted" || outcome === "duplicate" ? c.ok : c.failed).updateUnsafe(1, context)
      }
    },
    undocumented: () => undocumented.updateUnsafe(1, context),
    snapshot: () => {
      const h = latency.valueUnsafe(context)
      const buckets = latencyBucketsMillis.map((le, i) => ({ le, count: h.buckets[i]?.[1] ?? 0 }))
      return {
        received: received.valueUnsafe(context).count,
        accepted: accepted.valueUnsafe(context).count,
        duplicates: duplicates.valueUnsafe(context).count,
        rejected: Object.fromEntries(rejectReasons.map((r) => [r, rejected[r].valueUnsafe(context).count])) as Record<RejectReason, number>,
        undocumented: undocumented.valueUnsafe(context).count,
        latencyMillis: { buckets: [...buckets, { le: Infinity, count: h.count }], sum: h.sum, count: h.count }
      }
    }
  }
}
