/**
 * Counters and a latency histogram of the webhook receiver, readable as a snapshot and as
 * Prometheus text lines (the sync server's `/metrics` includes them).
 *
 * Plain mutable counters on purpose: they sit on the hot path of every delivery and are only
 * read by scrapes, so no fiber or lock is involved.
 */

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
  readonly answered: (outcome: "accepted" | "duplicate" | RejectReason, latencyMillis: number) => void
  readonly snapshot: () => Snapshot
}

export const makeRecorder = (): Recorder => {
  let received = 0
  let accepted = 0
  let duplicates = 0
  const rejected = Object.fromEntries(rejectReasons.map((r) => [r, 0])) as Record<RejectReason, number>
  const counts = Array.from({ length: latencyBucketsMillis.length + 1 }, () => 0)
  let sum = 0
  let count = 0
  return {
    received: () => {
      received++
    },
    answered: (outcome, latencyMillis) => {
      if (outcome === "accepted") accepted++
      else if (outcome === "duplicate") duplicates++
      else rejected[outcome]++
      let i = 0
      while (i < latencyBucketsMillis.length && latencyMillis > latencyBucketsMillis[i]!) i++
      counts[i]!++
      sum += latencyMillis
      count++
    },
    snapshot: () => {
      let cumulative = 0
      const buckets = latencyBucketsMillis.map((le, i) => {
        cumulative += counts[i]!
        return { le, count: cumulative }
      })
      return {
        received,
        accepted,
        duplicates,
        rejected: { ...rejected },
        latencyMillis: { buckets: [...buckets, { le: Infinity, count }], sum, count }
      }
    }
  }
}

/**
 * Prometheus text exposition (version 0.0.4) of a snapshot. Lines end with "\n"; the sync
 * server concatenates them into its `/metrics` answer.
 */
export const toPrometheus = (snapshot: Snapshot, prefix = "ocs_ingestion"): string => {
  const lines: Array<string> = []
  const counter = (name: string, help: string, samples: ReadonlyArray<readonly [string, number]>) => {
    lines.push(`# HELP ${prefix}_${name} ${help}`, `# TYPE ${prefix}_${name} counter`)
    for (const [labels, value] of samples) lines.push(`${prefix}_${name}${labels} ${value}`)
  }
  counter("received_total", "Webhook requests received.", [["", snapshot.received]])
  counter("accepted_total", "Webhooks stored durably and answered 200.", [["", snapshot.accepted]])
  counter("duplicates_total", "Redeliveries answered 200 without a new record.", [["", snapshot.duplicates]])
  counter(
    "rejected_total",
    "Webhook requests not answered 200, by reason.",
    rejectReasons.map((reason) => [`{reason="${reason}"}`, snapshot.rejected[reason]] as const)
  )
  const h = `${prefix}_latency_ms`
  lines.push(`# HELP ${h} Time from request start to answer, in milliseconds.`, `# TYPE ${h} histogram`)
  for (const b of snapshot.latencyMillis.buckets) {
    lines.push(`${h}_bucket{le="${b.le === Infinity ? "+Inf" : b.le}"} ${b.count}`)
  }
  lines.push(`${h}_sum ${snapshot.latencyMillis.sum}`, `${h}_count ${snapshot.latencyMillis.count}`)
  return lines.join("\n") + "\n"
}
