/**
 * Dry run: a plugin over past events of the log (one tenant or all, up to an offset), with its
 * side effects captured and reported per event instead of performed: outbound HTTP, API calls
 * and key-value writes never leave the process. Reads (read-model queries) are real, and show
 * today's state, not the state at the time of each event.
 *
 * ```ts
 * const report = yield* DryRun.dryRun(plugin, { config, tenant: "1001:42", untilOffset: 5000 })
 * for (const e of report.events) console.log(e.eventId, e.effects)
 * ```
 */
import { Effect, Option, Stream } from "effect"
import { EventLog, type EventLogError, type LogRecord } from "@ocs/event-log"
import { DomainEvent, type Operation } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { Capabilities, Execution, Plugin, type PluginError } from "@ocs/plugin-sdk"
import { readModelsQuery } from "./internal/query.ts"

type AnyPlugin = Plugin.AnyPlugin
type HttpRequest = Capabilities.HttpRequest
type HttpResponse = Capabilities.HttpResponse
type InvalidPluginConfig = PluginError.InvalidPluginConfig
type SdkVersionMismatch = PluginError.SdkVersionMismatch
const { checkSdkVersion, decodeConfig } = Plugin
const { makeCaptureRunner, policyOf } = Execution
const { emptyQuery } = Capabilities

export type EventReport = Execution.EventReport

export interface Options {
  /** Raw configuration, decoded with the plugin's schema. */
  readonly config?: unknown
  /** Default "all". */
  readonly tenant?: LogRecord.TenantFilter | undefined
  readonly fromOffset?: number | undefined
  /** Last offset to include. */
  readonly untilOffset?: number | undefined
  /** What captured HTTP requests answer (default 200, empty body). */
  readonly httpResponse?: ((request: HttpRequest) => HttpResponse) | undefined
  /** What captured API calls answer (default data null). */
  readonly apiResponse?: ((operation: Operation.Operation<unknown>, body: unknown) => unknown) | undefined
  /** Per-event time limit (default: the plugin's, else 30 s). One attempt per event. */
  readonly timeoutMillis?: number | undefined
  /**
   * Default true: replay what the sync server's plugins see, `DomainEvent.decodeChangeStream`
   * (one event per change whether a webhook or a pull came first; docs/architecture.md §4.14).
   * False: every event decoded from every record (a log whose read models did not relay the
   * changes webhooks revealed).
   */
  readonly changeStream?: boolean | undefined
}

export interface Report {
  readonly plugin: string
  readonly version: string
  readonly records: number
  readonly events: ReadonlyArray<EventReport>
  readonly totals: {
    readonly events: number
    readonly handled: number
    readonly failed: number
    readonly httpRequests: number
    readonly apiCalls: number
    readonly kvWrites: number
  }
}

export const dryRun = Effect.fn("DryRun.dryRun")(function*(
  plugin: AnyPlugin,
  options: Options = {}
): Effect.fn.Return<Report, InvalidPluginConfig | SdkVersionMismatch | EventLogError.EventLogError, EventLog.EventLog> {
  yield* checkSdkVersion(plugin)
  const config = yield* decodeConfig(plugin, options.config)
  const log = yield* EventLog.EventLog
  const rm = yield* Effect.serviceOption(ReadModels.ReadModels)
  const policy = { ...policyOf(plugin, { timeoutMillis: options.timeoutMillis }), maxAttempts: 1 }
  const runner = makeCaptureRunner(plugin, config, {
    query: (tenant) => Option.isSome(rm) ? readModelsQuery(rm.value, tenant) : emptyQuery,
    httpResponse: options.httpResponse,
    apiResponse: options.apiResponse,
    policy
  })
  const tags = new Set<string>(plugin.subscribes)
  const events: Array<EventReport> = []
  let records = 0
  yield* log.read({ tenant: options.tenant ?? "all", from: options.fromOffset, untilOffset: options.untilOffset }).pipe(
    Stream.runForEach((record) =>
      Effect.gen(function*() {
        records++
        for (const event of (options.changeStream === false ? DomainEvent.decode : DomainEvent.decodeChangeStream)(record)) {
          if (tags.has(event._tag)) events.push(yield* runner.run(event, record.offset))
        }
      })
    )
  )
  const count = (tag: string) => events.reduce((n, e) => n + e.effects.filter((f) => f._tag === tag).length, 0)
  return {
    plugin: plugin.name,
    version: plugin.version,
    records,
    events,
    totals: {
      events: events.length,
      handled: events.filter((e) => e.outcome === "handled").length,
      failed: events.filter((e) => e.outcome === "failed").length,
      httpRequests: count("HttpRequest"),
      apiCalls: count("ApiCall"),
      kvWrites: count("KvSet") + count("KvDelete")
    }
  }
})
