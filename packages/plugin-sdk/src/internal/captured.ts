/**
 * Runs a plugin over events with capturing capabilities: HTTP, API calls, commands and
 * key-value writes are recorded (and, for HTTP in tests, optionally performed), never sent by default.
 */
import { Effect } from "effect"
import { type DomainEvent, Ids, type Operation } from "@ocs/protocol"
import {
  type CapturedEffect,
  capturingApi,
  capturingCommands,
  capturingHttp,
  capturingKv,
  capturingLogger,
  effectLogger,
  fetchHttp,
  type Http,
  type HttpRequest,
  type HttpResponse,
  type PluginContext,
  type Query,
  type Tenant,
  tenantOf
} from "../Capabilities.ts"
import type { AnyPlugin } from "../Plugin.ts"
import { execute, type Policy } from "./execute.ts"

export interface EventReport {
  /** Log offset of the record the event came from (dry run); its index in the list (tests). */
  readonly offset: number
  readonly eventId: string
  readonly tag: DomainEvent.Tag
  readonly tenant: Tenant
  readonly outcome: "handled" | "failed"
  readonly attempts: number
  readonly error: string | undefined
  /** What the handler did, in order (HTTP requests, API calls, KV writes, log lines). */
  readonly effects: ReadonlyArray<CapturedEffect>
}

export interface CaptureOptions {
  readonly query: (tenant: Tenant) => Query
  /** "capture" (default): record and answer `respond`; "live": record and perform. */
  readonly http?: "capture" | "live" | undefined
  readonly httpResponse?: ((request: HttpRequest) => HttpResponse) | undefined
  readonly apiResponse?: ((operation: Operation.Operation<unknown>, body: unknown) => unknown) | undefined
  readonly policy: Policy
  readonly echoLogs?: boolean | undefined
}


export const makeCaptureRunner = (plugin: AnyPlugin, config: unknown, options: CaptureOptions) => {
  const memory = new Map<string, Map<string, unknown>>()
  const live = fetchHttp()
  const memoryOf = (tenant: Tenant) => {
    const key = Ids.tenantKey(tenant)
    let m = memory.get(key)
    if (m === undefined) memory.set(key, (m = new Map()))
    return m
  }
  const run = (event: DomainEvent.DomainEvent, offset: number) =>
    Effect.gen(function*() {
      const capture = { effects: [] as Array<CapturedEffect> }
      const tenant = tenantOf(event)
      const captured = capturingHttp(capture, options.httpResponse)
      const http: Http = options.http === "live"
        ? {
          request: (r) => Effect.andThen(captured.request(r), live.request(r)),
          postJson: (u, v, o) => Effect.andThen(captured.postJson(u, v, o), live.postJson(u, v, o))
        }
        : captured
      const contextFor = (attempt: number): PluginContext<unknown> => ({
        plugin: { name: plugin.name, version: plugin.version },
        eventId: event.id,
        tenant,
        config,
        attempt,
        dryRun: true,
        query: options.query(tenant),
        log: capturingLogger(capture, options.echoLogs === true ? effectLogger({ plugin: plugin.name, eventId: event.id, dryRun: true }) : undefined),
        kv: capturingKv(capture, memoryOf(tenant)),
        api: capturingApi(capture, options.apiResponse),
        http,
        commands: capturingCommands(capture)
      })
      const outcome = yield* execute(plugin, event, contextFor, options.policy)
      return {
        offset,
        eventId: event.id,
        tag: event._tag,
        tenant,
        outcome: outcome._tag === "Handled" ? "handled" : "failed",
        attempts: outcome.attempts,
        error: outcome._tag === "Failed" ? outcome.error.message : undefined,
        effects: capture.effects
      } satisfies EventReport
    })
  /** The key-value state each tenant ended with. */
  const kvState = (tenant: Tenant): ReadonlyMap<string, unknown> => {
    const out = new Map<string, unknown>()
    for (const [k, v] of memory.get(Ids.tenantKey(tenant)) ?? []) if (typeof v !== "symbol") out.set(k, v)
    return out
  }
  return { run, kvState, memoryOf }
}
