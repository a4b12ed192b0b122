/**
 * Every metric of the server as an Effect `Metric` in the server's one registry
 * (./Telemetry.ts), and `/metrics` as that registry in Prometheus text (Effect's
 * `PrometheusMetrics`; docs/architecture.md §4.17).
 *
 * Two kinds of series: those counted where things happen (sync runs here, webhooks in the
 * ingestion), and those whose truth lives elsewhere (the scheduler's keys, tenants, loops,
 * lags, plugins, read-model rows), published into the registry just before each scrape.
 *
 * Labels are tenant-free: with thousands of tenants an appId/businessId label would explode
 * the series count; per-tenant detail is in the admin API. Resources, loops, plugins and
 * error tags are few and known.
 */
import { Clock, Context, Effect, Layer, Metric, Option } from "effect"
import { PrometheusMetrics } from "effect/observability"
import type { KafkaEventLog, LogRecord } from "@ocs/event-log"
import type { LoopStatus } from "./LoopHealth.ts"

const counter = (name: string, description: string, attributes?: Metric.Metric.Attributes) =>
  Metric.counter(name, { description, incremental: true, ...(attributes === undefined ? {} : { attributes }) })
const gauge = (name: string, description: string, attributes?: Metric.Metric.Attributes) =>
  Metric.gauge(name, { description, ...(attributes === undefined ? {} : { attributes }) })

const syncPages = counter("ocs_sync_pages_total", "List pages appended to the event log by syncs.")
const syncRecords = counter("ocs_sync_records_total", "Records in those pages.")
const syncRuns = counter("ocs_sync_runs_total", "Sync passes run.")

/** One metric object per label set, made once. */
const memo = <M>(make: (...labels: Array<string>) => M) => {
  const made = new Map<string, M>()
  return (...labels: Array<string>): M => {
    const key = labels.join("\u0000")
    let m = made.get(key)
    if (m === undefined) {
      m = make(...labels)
      made.set(key, m)
    }
    return m
  }
}

const syncErrors = memo((error) => counter("ocs_sync_errors_total", "Sync failures by error.", { error }))
const resourcePages = memo((resource) => counter("ocs_sync_resource_pages_total", "Pages appended, per resource.", { resource }))
const resourceRecords = memo((resource) => counter("ocs_sync_resource_records_total", "Records appended, per resource.", { resource }))
const resourceErrors = memo((resource, error) =>
  counter("ocs_sync_resource_errors_total", "Sync passes that failed, per resource and error.", { resource, error })
)
const resourceSucceeded = memo((resource) =>
  gauge("ocs_sync_resource_last_success_timestamp_seconds", "When a pass of the resource last completed (any tenant).", { resource })
)

/** What a finished sync pass reports (see SyncEngine's `onRun`). */
export interface RunCount {
  readonly mode: string
  readonly pages: number
  readonly records: number
}

/*
 * What the series are read from, as the shapes this module reads (the rate-limit scheduler's
 * keys and totals, the tenant registry's businesses, the plugin runtime's metrics, the sync
 * state): the owners' own types fit them, and this package depends on none of those owners.
 */

/** A budget key as the scheduler reports it (`RateLimiter.KeyMetrics`). */
export interface KeySource {
  readonly lockedUntil?: number | null | undefined
  readonly queueDepth: number
  readonly inFlight: number
}

/** A plugin as its runtime reports it (`PluginRuntime.PluginMetrics`). */
export interface PluginSource {
  readonly name: string
  readonly handled: number
  readonly failures: number
  readonly deadLettered: number
  readonly deadLetters: number
  readonly lag: number | null
  readonly lagSeconds?: number | null
}

/** A tenant's resource as the sync state holds it (`SyncState.ResourceState`). */
export interface ResourceSource {
  readonly resource: string
  readonly paused: unknown
  readonly lastError: unknown
  readonly fullCompletedAt: unknown
  readonly fullStartedAt: unknown
}

/** The sources of the series published at scrape time. */
/** The write path as its engine reports it (`CommandEngine.CommandMetrics`), and its write keys locked now. */
export interface CommandsSource {
  readonly byKindAndState: ReadonlyArray<{ readonly kind: string; readonly state: string; readonly count: number }>
  readonly inDoubt: number
  readonly waitingForAPerson: number
  readonly flagged: number
  readonly laneQueue: number
  readonly laneBusy: number
  readonly writeKeysLocked: number
}

export interface Sources {
  readonly keys: ReadonlyArray<KeySource>
  readonly totals: { readonly calls: number; readonly locks: number }
  readonly businesses: ReadonlyArray<{ readonly status: string }>
  readonly loops: ReadonlyArray<LoopStatus>
  readonly projectionLag: Option.Option<LogRecord.Lag>
  /** Kafka mode: outbox records not relayed to the topic yet. */
  readonly relayBacklog: Option.Option<LogRecord.Lag>
  /** Kafka mode: the relay's request limit and the records it set aside for their size. */
  readonly relay?: Option.Option<KafkaEventLog.RelayStatus> | undefined
  readonly plugins: ReadonlyArray<PluginSource>
  readonly readModelRows: Readonly<Record<string, number>>
  /** Every tenant's sync state per resource. */
  readonly syncStates: ReadonlyArray<ResourceSource>
  readonly commands?: CommandsSource | undefined
}

/** Where a tenant's resource stands: the sync progress of `ocs_sync_resource_tenants`. */
export const syncStages = ["pending", "full_sync", "synced", "failing", "paused"] as const
const stageOf = (s: ResourceSource): (typeof syncStages)[number] =>
  s.paused !== null ? "paused" : s.lastError !== null ? "failing" : s.fullCompletedAt !== null ? "synced" : s.fullStartedAt !== null ? "full_sync" : "pending"

export interface ServerMetrics {
  /** Counts a finished sync pass of `resource` (an operation key). */
  readonly countRun: (report: RunCount, resource: string, errorTag: string | undefined) => void
  /** The sync counters' totals since start, read from the registry (the console's pulls per second). */
  readonly syncTotals: Effect.Effect<{ readonly runs: number; readonly pages: number; readonly records: number }>
  /** Publishes the scrape-time series, then renders the whole registry. */
  readonly prometheus: (sources: Sources) => Effect.Effect<string>
}

/**
 * A counter whose total is kept elsewhere (and never goes down there): the registry reads it
 * through a hook, so the exported value is exactly the source's.
 */
const observedCounter = (metric: Metric.Counter<number>, value: number, context: Context.Context<never>) =>
  Metric.registerUnsafe(metric, context, {
    get: () => ({ count: value, incremental: true }),
    update: () => {},
    modify: () => {}
  })

const make = Effect.gen(function*() {
  const context = yield* Effect.context<never>()
  const startedAt = yield* Clock.currentTimeMillis
  const set = (metric: Metric.Gauge<number>, value: number) => metric.updateUnsafe(value, context)
  for (const m of [syncPages, syncRecords, syncRuns]) m.updateUnsafe(0, context)

  const countRun: ServerMetrics["countRun"] = (report, resource, errorTag) => {
    if (report.mode === "skipped") return
    syncRuns.updateUnsafe(1, context)
    syncPages.updateUnsafe(report.pages, context)
    syncRecords.updateUnsafe(report.records, context)
    resourcePages(resource).updateUnsafe(report.pages, context)
    resourceRecords(resource).updateUnsafe(report.records, context)
    if (errorTag !== undefined) {
      syncErrors(errorTag).updateUnsafe(1, context)
      resourceErrors(resource, errorTag).updateUnsafe(1, context)
    } else {
      set(resourceSucceeded(resource), Date.now() / 1000)
    }
  }

  const publish = (s: Sources, now: number) => {
    const byStatus = { active: 0, paused: 0, attention: 0 } as Record<string, number>
    for (const b of s.businesses) byStatus[b.status] = (byStatus[b.status] ?? 0) + 1
    for (const [status, n] of Object.entries(byStatus)) set(tenants(status), n)
    set(rateKeys, s.keys.length)
    set(rateLocked, s.keys.filter((k) => (k.lockedUntil ?? 0) > now).length)
    set(rateQueue, s.keys.reduce((n, k) => n + k.queueDepth, 0))
    set(rateInFlight, s.keys.reduce((n, k) => n + k.inFlight, 0))
    // From the totals, which keep what swept keys had counted: a counter never goes down.
    observedCounter(rateCalls, s.totals.calls, context)
    observedCounter(rateLocks, s.totals.locks, context)
    set(uptime, Math.round((now - startedAt) / 1000))
    const memory = process.memoryUsage()
    set(rss, memory.rss)
    set(heapUsed, memory.heapUsed)
    set(heapTotal, memory.heapTotal)
    set(external, memory.external + memory.arrayBuffers)
    for (const l of s.loops) {
      set(loopUp(l.name), l.up ? 1 : 0)
      observedCounter(loopRestarts(l.name), l.restarts, context)
    }
    if (Option.isSome(s.projectionLag)) {
      set(lagRecords, s.projectionLag.value.records)
      set(lagSeconds, s.projectionLag.value.seconds)
    }
    if (Option.isSome(s.relayBacklog)) {
      set(relayRecords, s.relayBacklog.value.records)
      set(relaySeconds, s.relayBacklog.value.seconds)
    }
    if (s.relay !== undefined && Option.isSome(s.relay)) {
      set(relayDeadLetters, s.relay.value.deadLetters)
      set(relayMaxRequestBytes, s.relay.value.limitBytes)
    }
    for (const p of s.plugins) {
      observedCounter(pluginHandled(p.name), p.handled, context)
      observedCounter(pluginFailures(p.name), p.failures, context)
      observedCounter(pluginDeadLettered(p.name), p.deadLettered, context)
      set(pluginDeadLetters(p.name), p.deadLetters)
      if (p.lag !== null) set(pluginLag(p.name), p.lag)
      if (p.lagSeconds !== undefined && p.lagSeconds !== null) set(pluginLagSeconds(p.name), p.lagSeconds)
    }
    for (const [resource, n] of Object.entries(s.readModelRows)) set(readModelRows(resource), n)
    if (s.commands !== undefined) {
      for (const c of s.commands.byKindAndState) set(commandsBy(c.kind, c.state), c.count)
      set(commandsInDoubt, s.commands.inDoubt)
      set(commandsForAPerson, s.commands.waitingForAPerson)
      set(commandsFlagged, s.commands.flagged)
      set(writeLaneQueue, s.commands.laneQueue)
      set(writeLaneBusy, s.commands.laneBusy)
      set(writeKeysLocked, s.commands.writeKeysLocked)
    }
    const stages = new Map<string, Record<string, number>>()
    for (const state of s.syncStates) {
      let counts = stages.get(state.resource)
      if (counts === undefined) {
        counts = Object.fromEntries(syncStages.map((stage) => [stage, 0]))
        stages.set(state.resource, counts)
      }
      counts[stageOf(state)]!++
    }
    for (const [resource, counts] of stages) {
      for (const [stage, n] of Object.entries(counts)) set(resourceTenants(resource, stage), n)
    }
  }

  return {
    countRun,
    syncTotals: Effect.provideContext(
      Effect.map(Effect.all([Metric.value(syncRuns), Metric.value(syncPages), Metric.value(syncRecords)]), ([runs, pages, records]) => ({
        runs: runs.count,
        pages: pages.count,
        records: records.count
      })),
      context
    ),
    prometheus: (sources) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        publish(sources, now)
        return PrometheusMetrics.formatUnsafe(context)
      })
  } satisfies ServerMetrics
})

const tenants = memo((status) => gauge("ocs_tenants", "Tenants by status.", { status }))
const rateKeys = gauge("ocs_rate_keys", "Budget keys the scheduler tracks.")
const rateLocked = gauge("ocs_rate_locked_keys", "Budget keys locked after an ERR_429.")
const rateQueue = gauge("ocs_rate_queue_depth", "Calls waiting for budget.")
const rateInFlight = gauge("ocs_rate_in_flight", "Calls in flight.")
const rateCalls = counter("ocs_rate_calls_total", "Calls granted by the scheduler.")
const rateLocks = counter("ocs_rate_locks_total", "Locks taken.")
const uptime = gauge("ocs_process_uptime_seconds", "Seconds since start.")
const rss = gauge("ocs_process_resident_memory_bytes", "Resident set size.")
const heapUsed = gauge("ocs_process_heap_used_bytes", "V8 heap in use.")
const heapTotal = gauge("ocs_process_heap_total_bytes", "V8 heap reserved.")
const external = gauge("ocs_process_external_bytes", "Memory of C++ objects bound to JS (buffers, SQLite).")
const loopUp = memo((loop) => gauge("ocs_loop_up", "Background loop running (1) or down, waiting to restart (0).", { loop }))
const loopRestarts = memo((loop) => counter("ocs_loop_restarts_total", "Restarts of a background loop after a failure.", { loop }))
const lagRecords = gauge("ocs_projection_lag_records", "Log records not projected into the read models yet.")
const lagSeconds = gauge("ocs_projection_lag_seconds", "Age of the oldest log record not projected yet.")
const relayRecords = gauge("ocs_outbox_unrelayed_records", "Kafka mode: outbox records (acknowledged webhooks, pulled pages) not on the topic yet.")
const relaySeconds = gauge("ocs_outbox_unrelayed_seconds", "Kafka mode: age of the oldest outbox record not on the topic yet.")
const relayDeadLetters = gauge("ocs_relay_dead_letters", "Kafka mode: outbox records larger than the topic accepts, set aside until a redrive.")
const relayMaxRequestBytes = gauge("ocs_relay_max_request_bytes", "Kafka mode: the largest request the relay sends (the topic's max.message.bytes unless capped).")
const pluginHandled = memo((plugin) => counter("ocs_plugin_events_handled_total", "Events a plugin handled successfully.", { plugin }))
const pluginFailures = memo((plugin) => counter("ocs_plugin_failures_total", "Failed handler attempts.", { plugin }))
const pluginDeadLettered = memo((plugin) => counter("ocs_plugin_dead_lettered_total", "Events dead-lettered after their last attempt.", { plugin }))
const pluginDeadLetters = memo((plugin) => gauge("ocs_plugin_dead_letters", "Dead letters waiting for a re-drive.", { plugin }))
const pluginLag = memo((plugin) => gauge("ocs_plugin_lag_records", "Log head offset minus the plugin's checkpoint.", { plugin }))
const pluginLagSeconds = memo((plugin) => gauge("ocs_plugin_lag_seconds", "Age of the oldest log record the plugin has not handled yet.", { plugin }))
const resourceTenants = memo((resource, state) =>
  gauge("ocs_sync_resource_tenants", "Tenants per resource and sync stage (pending, full_sync, synced, failing, paused).", { resource, state })
)
const readModelRows = memo((resource) => gauge("ocs_read_model_rows", "Rows in the read models per resource, all tenants (tombstones included).", { resource }))

const commandsBy = memo((kind, state) => gauge("ocs_commands", "Commands of the write path by kind and state, all tenants.", { kind, state }))
const commandsInDoubt = gauge("ocs_commands_in_doubt", "Commands in doubt (their answer was lost), being resolved or left to a person.")
const commandsForAPerson = gauge("ocs_commands_waiting_for_a_person", "Commands in doubt whose read-back could not tell: a person retries or marks them done.")
const commandsFlagged = gauge("ocs_commands_flagged", "Confirmed commands whose effect the service does not show.")
const writeLaneQueue = gauge("ocs_write_lane_queue", "Commands waiting for their write lane (one call per tenant and write URL) or for a coalesced call.")
const writeLaneBusy = gauge("ocs_write_lane_busy", "Write lanes with a call in flight.")
const writeKeysLocked = gauge("ocs_write_keys_locked", "Write budget keys locked after an ERR_429 (nothing is sent on them until unlocked).")

/** The server's metrics as a service, so the sync engine and the HTTP side share them. */
export class Metrics extends Context.Service<Metrics, ServerMetrics>()("@ocs/observability/Metrics") {
  /** Counts into the registry of the context it is built in (the server's, ./Telemetry.ts). */
  static readonly layer: Layer.Layer<Metrics> = Layer.effect(Metrics, make)
}
