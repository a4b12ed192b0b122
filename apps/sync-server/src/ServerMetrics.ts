/**
 * Counters of the server itself, and the Prometheus text of /metrics (the ingestion's own
 * lines come first). Tenant ids are not labels: with thousands of tenants they would explode
 * the series count; per-tenant detail is in the admin API.
 */
import { Context, Layer } from "effect"
import type { RateLimiter } from "@ocs/transport"
import type { Business } from "./TenantStore.ts"

export class ServerMetrics {
  syncPages = 0
  syncRecords = 0
  syncRuns = 0
  readonly syncErrors = new Map<string, number>()
  readonly startedAt = Date.now()

  countError(tag: string): void {
    this.syncErrors.set(tag, (this.syncErrors.get(tag) ?? 0) + 1)
  }

  prometheus(keys: ReadonlyArray<RateLimiter.KeyMetrics>, totals: RateLimiter.Totals, businesses: ReadonlyArray<Business>): string {
    const lines: Array<string> = []
    const metric = (name: string, type: string, help: string, samples: ReadonlyArray<readonly [string, number]>) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)
      for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`)
    }
    metric("ocs_sync_pages_total", "counter", "List pages appended to the event log by syncs.", [["", this.syncPages]])
    metric("ocs_sync_records_total", "counter", "Records in those pages.", [["", this.syncRecords]])
    metric("ocs_sync_runs_total", "counter", "Sync passes run.", [["", this.syncRuns]])
    metric("ocs_sync_errors_total", "counter", "Sync failures by error.", [...this.syncErrors].map(([tag, n]) => [`{error="${tag}"}`, n] as const))
    const byStatus = { active: 0, paused: 0, attention: 0 }
    for (const b of businesses) byStatus[b.status]++
    metric("ocs_tenants", "gauge", "Tenants by status.", Object.entries(byStatus).map(([s, n]) => [`{status="${s}"}`, n] as const))
    const now = Date.now()
    metric("ocs_rate_keys", "gauge", "Budget keys the scheduler tracks.", [["", keys.length]])
    metric("ocs_rate_locked_keys", "gauge", "Budget keys locked after an ERR_429.", [["", keys.filter((k) => (k.lockedUntil ?? 0) > now).length]])
    metric("ocs_rate_queue_depth", "gauge", "Calls waiting for budget.", [["", keys.reduce((n, k) => n + k.queueDepth, 0)]])
    metric("ocs_rate_in_flight", "gauge", "Calls in flight.", [["", keys.reduce((n, k) => n + k.inFlight, 0)]])
    // From the totals, which keep what swept keys had counted: a counter never goes down.
    metric("ocs_rate_calls_total", "counter", "Calls granted by the scheduler.", [["", totals.calls]])
    metric("ocs_rate_locks_total", "counter", "Locks taken.", [["", totals.locks]])
    metric("ocs_process_uptime_seconds", "gauge", "Seconds since start.", [["", Math.round((now - this.startedAt) / 1000)]])
    const memory = process.memoryUsage()
    metric("ocs_process_resident_memory_bytes", "gauge", "Resident set size.", [["", memory.rss]])
    metric("ocs_process_heap_used_bytes", "gauge", "V8 heap in use.", [["", memory.heapUsed]])
    metric("ocs_process_heap_total_bytes", "gauge", "V8 heap reserved.", [["", memory.heapTotal]])
    metric("ocs_process_external_bytes", "gauge", "Memory of C++ objects bound to JS (buffers, SQLite).", [["", memory.external + memory.arrayBuffers]])
    return lines.join("\n")
  }
}

/** The server's counters as a service, so the sync engine and the HTTP side share them. */
export class Metrics extends Context.Service<Metrics, ServerMetrics>()("@ocs/sync-server/Metrics") {
  static readonly layer: Layer.Layer<Metrics> = Layer.sync(Metrics, () => new ServerMetrics())
}
