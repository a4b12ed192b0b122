/**
 * The plugin runtime: each plugin follows the event log on its own fiber, with its own
 * checkpoint (in the plugins' SQLite file), so a failing or slow plugin delays nobody else, and
 * ingestion and projections never wait on plugins (they read the log independently).
 *
 * Delivery is at least once: a log record's events are handled, then the record's checkpoint is
 * saved; a crash in between redelivers the record (same event ids). A failing event is retried
 * with exponential backoff, each attempt under a timeout, then dead-lettered (kept with its
 * record, error and attempts; listable; re-drivable) and the plugin moves on.
 *
 * Over Kafka, a webhook redelivered to another server is on the topic twice under one dedupe
 * key: each plugin is delivered the first copy only (the store remembers, per plugin, tenant
 * and dedupe key, the position it was delivered at; docs/architecture.md §4.19).
 */
import { Context, Effect, Layer, Option, Schedule, Scope, Stream } from "effect"
import { Checkpoints, EventLog, type LogRecord, TraceContext } from "@ocs/event-log"
import { DomainEvent, Ids } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { CommerceClient } from "@ocs/transport"
import { Capabilities, Execution, Plugin, PluginError } from "@ocs/plugin-sdk"
import { readModelsQuery } from "./internal/query.ts"
import * as PluginLoader from "./PluginLoader.ts"
import * as PluginStore from "./PluginStore.ts"

type Installed = Plugin.Installed
type Tenant = Capabilities.Tenant
type PluginStoreError = PluginError.PluginStoreError
const { effectLogger, fetchHttp, tenantOf } = Capabilities
const { execute, policyOf } = Execution
const { ApiUnavailable, CommandRefused, DuplicatePlugin, UnknownPlugin } = PluginError

export type { Installed }

/** What a plugin's command needs from the host's command engine (docs/architecture.md §4.31). */
export interface CommandsHost {
  readonly send: (
    tenant: { readonly appId: string; readonly businessId: string },
    request: { readonly plugin: string; readonly eventId: string; readonly key: string; readonly kind: string; readonly payload: unknown }
  ) => Effect.Effect<Capabilities.CommandOutcome, PluginError.CommandRefused>
}

export interface Options {
  /** The plugins' SQLite file: checkpoints, key-value stores, dead letters. */
  readonly filename: string
  readonly plugins: ReadonlyArray<Installed>
  /** Which records plugins see (default "all" tenants). */
  readonly tenant?: LogRecord.TenantFilter | undefined
  /** Defaults for plugins that do not set their own (5 attempts, 200 ms base, 30 s cap). */
  readonly retry?: Plugin.RetryPolicy | undefined
  /** Per-attempt time limit for plugins that do not set their own (default 30 s). */
  readonly timeoutMillis?: number | undefined
  readonly http?: Capabilities.HttpOptions | undefined
  /**
   * The access of a tenant, for `ctx.api` (the server reads it from its tenant store). Without
   * it, or without a `CommerceClient` in the context, API calls fail with `ApiUnavailable`.
   */
  readonly tenantAccess?: ((tenant: { readonly appId: string; readonly businessId: string }) => Effect.Effect<Option.Option<CommerceClient.TenantAccess>, unknown>) | undefined
  /**
   * Pause before a plugin's subscription is opened again after the log failed (default 1 s,
   * jittered by up to 20% either way so that plugins stopped together reopen apart).
   */
  readonly restartDelayMillis?: number | undefined
  /**
   * The host's command engine, for `ctx.commands` (the server adapts `@ocs/commands`): a
   * command keyed by the plugin, the event id and the plugin's key, answered with its outcome.
   * Without it, commands are refused as unavailable.
   */
  readonly commands?: CommandsHost | undefined
  /**
   * Runs each plugin's subscription (named `plugin-<name>`), restarting it after it stops. Given
   * a host's loop supervisor, a plugin whose subscription fails is logged, restarted with that
   * supervisor's backoff and shown in the host's loop health; `restartDelayMillis` is then
   * unused. Default: restart after `restartDelayMillis`.
   */
  readonly supervise?: ((name: string, loop: Effect.Effect<unknown, unknown>) => Effect.Effect<unknown>) | undefined
  /**
   * The log's read models compare webhooks with the copy and relay what changed (the sync
   * server): plugins then see `DomainEvent.decodeChangeStream`, one event per change whether a
   * webhook or a pull came first (docs/architecture.md §4.14). Default false: every event
   * decoded from every record.
   */
  readonly changeStream?: boolean | undefined
}

export interface PluginMetrics {
  readonly name: string
  readonly version: string
  readonly status: "running" | "restarting"
  /** Events handled successfully since start (re-drives included). */
  readonly handled: number
  /** Failed attempts since start. */
  readonly failures: number
  /** Events dead-lettered since start. */
  readonly deadLettered: number
  /** Dead letters waiting in the store. */
  readonly deadLetters: number
  /** Offset of the last record checkpointed; null before the first. */
  readonly lastOffset: number | null
  readonly headOffset: number | null
  /** Records of the plugin's tenants after lastOffset (not yet handled); null when unknown. */
  readonly lag: number | null
  readonly lastError: string | null
}

export interface RedriveResult {
  readonly succeeded: ReadonlyArray<number>
  readonly failed: ReadonlyArray<number>
}

export interface PluginRuntimeService {
  readonly plugins: ReadonlyArray<{ readonly name: string; readonly version: string; readonly subscribes: ReadonlyArray<DomainEvent.Tag> }>
  readonly metrics: Effect.Effect<ReadonlyArray<PluginMetrics>, PluginStoreError>
  readonly deadLetters: (plugin?: string) => Effect.Effect<ReadonlyArray<PluginStore.DeadLetter>, PluginStoreError>
  /** Runs dead letters again (one by id, all of a plugin, or all); those that succeed are removed. */
  readonly redrive: (target: { readonly id: number } | { readonly plugin?: string | undefined }) => Effect.Effect<RedriveResult, PluginError.UnknownPlugin | PluginStoreError>
  /** The key-value store of a plugin and tenant (admin, inspection). */
  readonly kv: (plugin: string, tenant: Tenant) => Capabilities.KeyValue
  /** Waits until the plugin (default: every plugin) has checkpointed `offset` or later. */
  readonly awaitOffset: (offset: number, plugin?: string) => Effect.Effect<void>
}

export type StartError = PluginStoreError | PluginError.InvalidPluginConfig | PluginError.SdkVersionMismatch | PluginError.DuplicatePlugin

export class PluginRuntime extends Context.Service<PluginRuntime, PluginRuntimeService>()("@ocs/plugin-runtime/PluginRuntime") {
  /** Runs the given plugins while the layer is alive. */
  static readonly layer = (options: Options): Layer.Layer<PluginRuntime, StartError, EventLog.EventLog | ReadModels.ReadModels> =>
    Layer.effect(PluginRuntime, make(options))

  /** Loads the plugins named in the server config (`{ use, config }`, paths relative to `baseDir`), then runs them. */
  static readonly layerFromConfig = (
    options: Omit<Options, "plugins"> & {
      readonly plugins: ReadonlyArray<PluginLoader.PluginEntry>
      readonly baseDir: string
      /** Also resolve package names from these folders (the host application's own plugins). */
      readonly searchDirs?: ReadonlyArray<string> | undefined
    }
  ): Layer.Layer<PluginRuntime, StartError | PluginLoader.LoadError, EventLog.EventLog | ReadModels.ReadModels> =>
    Layer.effect(
      PluginRuntime,
      Effect.flatMap(PluginLoader.loadAll(options.plugins, { baseDir: options.baseDir, searchDirs: options.searchDirs }), (plugins) => make({ ...options, plugins }))
    )
}

interface State {
  readonly plugin: Plugin.AnyPlugin
  readonly config: unknown
  readonly policy: Execution.Policy
  status: "running" | "restarting"
  handled: number
  failures: number
  deadLettered: number
  lastOffset: number | null
  /**
   * Over Kafka, offsets are topic positions (partition and offset in one number), not the
   * outbox file's offsets: the lag from the file's head is then unknown.
   */
  topicPositions: boolean
  lastError: string | null
}

export const consumerName = (plugin: string) => `plugin:${plugin}`

/** Starts every plugin in the current scope; they stop when it closes. */
export const make = Effect.fnUntraced(function*(
  options: Options
): Effect.fn.Return<PluginRuntimeService, StartError, EventLog.EventLog | ReadModels.ReadModels | Scope.Scope> {
  const log = yield* EventLog.EventLog
  const readModels = yield* ReadModels.ReadModels
  const client = yield* Effect.serviceOption(CommerceClient.CommerceClient)
  const scope = yield* Scope.Scope
  const store = yield* PluginStore.make({ filename: options.filename })
  const http = fetchHttp(options.http)
  const tenantFilter = options.tenant ?? "all"
  const decodeRecord = options.changeStream === true ? DomainEvent.decodeChangeStream : DomainEvent.decode

  const states = new Map<string, State>()
  for (const installed of options.plugins) {
    const plugin = installed.plugin
    if (states.has(plugin.name)) {
      return yield* new DuplicatePlugin({ plugin: plugin.name, message: `two plugins are named ${plugin.name}; names must be unique` })
    }
    yield* Plugin.checkSdkVersion(plugin)
    const config = yield* Plugin.decodeConfig(plugin, installed.config)
    const stored = yield* store.checkpoint(plugin.name)
    states.set(plugin.name, {
      plugin,
      config,
      policy: policyOf(plugin, { ...options.retry, timeoutMillis: options.timeoutMillis }),
      status: "running",
      handled: 0,
      failures: 0,
      deadLettered: 0,
      lastOffset: Option.match(stored, { onNone: () => null, onSome: (s) => s.offset }),
      topicPositions: Option.match(stored, { onNone: () => false, onSome: (s) => s.checkpoint.startsWith("kafka:") }),
      lastError: null
    })
  }

  const apiFor = (tenant: Tenant): Capabilities.Api => ({
    call: (operation, body) =>
      Effect.gen(function*() {
        const unavailable = (message: string) => new ApiUnavailable({ appId: tenant.appId, businessId: tenant.businessId, message })
        if (Option.isNone(client)) return yield* unavailable("no CommerceClient is configured for plugins")
        if (options.tenantAccess === undefined) return yield* unavailable("no tenant access resolver is configured for plugins")
        if (tenant.businessId === null) return yield* unavailable("application-level events have no business to call the API for")
        const access = yield* options.tenantAccess({ appId: tenant.appId, businessId: tenant.businessId }).pipe(
          Effect.mapError((e) => unavailable(`tenant access: ${String((e as { message?: unknown })?.message ?? e)}`))
        )
        if (Option.isNone(access)) return yield* unavailable(`tenant ${Ids.tenantKey(tenant)} is not known`)
        return yield* client.value.call(access.value, operation, body, { priority: "interactive" })
      })
  })

  const commandsFor = (plugin: string, eventId: string, tenant: Tenant): Capabilities.Commands => ({
    send: (kind, payload, sendOptions) => {
      const host = options.commands
      const refused = (message: string) => Effect.fail(new CommandRefused({ reason: "Unavailable", issues: [], message }))
      // Another business of the same application, or the event's own.
      const other = sendOptions?.businessId === undefined ? undefined : Ids.normalize(sendOptions.businessId) ?? null
      if (other === null) return refused(`businessId "${sendOptions?.businessId}" is not a business id`)
      const businessId = other ?? tenant.businessId
      if (host === undefined || businessId === null) {
        return refused(host === undefined ? "no command engine is configured for plugins" : "application-level events have no business to change (name one: businessId)")
      }
      const target = { appId: tenant.appId, businessId }
      const send = host.send(target, { plugin, eventId, key: sendOptions?.key ?? kind, kind, payload })
      if (businessId === tenant.businessId || options.tenantAccess === undefined) return send
      // A business the application is not connected to is refused before anything is stored.
      return options.tenantAccess(target).pipe(
        Effect.orElseSucceed(() => Option.none()),
        Effect.flatMap((access) => Option.isSome(access) ? send : refused(`business ${businessId} is not connected to application ${tenant.appId}`))
      )
    }
  })

  const contextFor = (state: State, event: DomainEvent.DomainEvent) => (attempt: number): Capabilities.PluginContext<unknown> => {
    const tenant = tenantOf(event)
    return {
      plugin: { name: state.plugin.name, version: state.plugin.version },
      eventId: event.id,
      tenant,
      config: state.config,
      attempt,
      dryRun: false,
      query: readModelsQuery(readModels, tenant),
      log: effectLogger({ plugin: state.plugin.name, eventId: event.id, appId: tenant.appId, businessId: tenant.businessId ?? "" }),
      kv: store.kv(state.plugin.name, tenant),
      api: apiFor(tenant),
      http,
      commands: commandsFor(state.plugin.name, event.id, tenant)
    }
  }

  const onFailure = (state: State) => (error: { readonly message: string }) =>
    Effect.sync(() => {
      state.failures++
      state.lastError = error.message
    })

  // One span per delivered record, in a trace of its own linked to the record's append
  // (docs/architecture.md §4.17); exported when that append was.
  const deliver = (state: State, delivery: LogRecord.Delivery) => {
    const links = TraceContext.links([delivery.record])
    return deliverRecord(state, delivery).pipe(
      Effect.annotateLogs({ tenant: `${delivery.record.appId}:${delivery.record.businessId ?? ""}` }),
      Effect.withSpan("PluginRuntime.deliver", {
        root: true,
        links,
        sampled: links.length > 0,
        attributes: { "ocs.plugin": state.plugin.name, "ocs.event.type": delivery.record.type, "ocs.log.offset": delivery.record.offset }
      })
    )
  }

  const deliverRecord = (state: State, delivery: LogRecord.Delivery) =>
    Effect.gen(function*() {
      // Kafka mode (docs/architecture.md §4.19): a webhook redelivered to another server is on
      // the topic twice under one dedupe key; every server reads a tenant's partition in the
      // same order, so each delivers the first copy and skips the others.
      const copy = delivery.record.kafka !== undefined && (yield* store.repeated(state.plugin.name, delivery.record))
      const tags = new Set<string>(state.plugin.subscribes)
      const events = copy ? [] : decodeRecord(delivery.record).filter((e) => tags.has(e._tag))
      for (const event of events) {
        const outcome = yield* execute(state.plugin, event, contextFor(state, event), state.policy, onFailure(state)).pipe(
          Effect.withSpan("Plugin.handle", { attributes: { "ocs.plugin": state.plugin.name, "ocs.event": event._tag } })
        )
        if (outcome._tag === "Handled") {
          state.handled++
          continue
        }
        yield* store.addDeadLetter({
          plugin: state.plugin.name,
          eventId: event.id,
          eventTag: event._tag,
          appId: event.appId,
          businessId: event.businessId,
          offset: delivery.record.offset,
          record: delivery.record,
          error: outcome.error.message,
          attempts: outcome.attempts
        })
        state.deadLettered++
        yield* Effect.logWarning(`plugin ${state.plugin.name}: event ${event.id} dead-lettered after ${outcome.attempts} attempt(s): ${outcome.error.message}`)
      }
      yield* store.saveCheckpoint(state.plugin.name, delivery.checkpoint, delivery.record.offset)
      state.lastOffset = delivery.record.offset
      state.topicPositions = delivery.record.kafka !== undefined
    })

  /**
   * One subscription from the stored checkpoint; it never ends by itself, so it only ends by
   * failing (log or plugin store, checkpoint read included), with the plugin's state updated.
   */
  const subscription = (state: State) =>
    Effect.gen(function*() {
      state.status = "running"
      const stored = yield* store.checkpoint(state.plugin.name)
      const from = Option.getOrUndefined(Option.map(stored, (s) => s.checkpoint))
      yield* log.subscribe(consumerName(state.plugin.name), { tenant: tenantFilter, from }).pipe(
        Stream.runForEach((delivery) => deliver(state, delivery))
      )
      return yield* Effect.fail(new Error("subscription ended"))
    }).pipe(Effect.tapError((error) =>
      Effect.sync(() => {
        state.status = "restarting"
        state.lastError = error.message
      })
    ))

  // Jittered: when the log fails, every plugin's subscription stops at once, and they should
  // not all reopen at the same instant. Other plugins are unaffected by one's failure.
  const restarts = Schedule.spaced(options.restartDelayMillis ?? 1000).pipe(Schedule.jittered)
  const restartAfterDelay = (state: State) =>
    subscription(state).pipe(
      Effect.catch(() => Effect.logError(`plugin ${state.plugin.name}: subscription stopped, restarting: ${state.lastError}`)),
      Effect.repeat(restarts)
    )
  const follow = (state: State) =>
    (options.supervise === undefined
      ? restartAfterDelay(state)
      : options.supervise(`plugin-${state.plugin.name}`, subscription(state))).pipe(Effect.annotateLogs({ plugin: state.plugin.name }))

  for (const state of states.values()) yield* Effect.forkIn(follow(state), scope)

  const metrics = Effect.gen(function*() {
    const out: Array<PluginMetrics> = []
    for (const s of states.values()) {
      // Over Kafka a checkpoint holds topic positions, which the outbox's head cannot measure.
      const head = s.topicPositions ? null : yield* log.head(tenantFilter).pipe(Effect.orElseSucceed(() => null))
      const lag = head === null
        ? null
        : yield* log.lag(Checkpoints.sqlite(s.lastOffset ?? 0), tenantFilter).pipe(
          Effect.map((l) => Option.match(l, { onNone: () => null, onSome: (l) => l.records })),
          Effect.orElseSucceed(() => null)
        )
      out.push({
        name: s.plugin.name,
        version: s.plugin.version,
        status: s.status,
        handled: s.handled,
        failures: s.failures,
        deadLettered: s.deadLettered,
        deadLetters: yield* store.countDeadLetters(s.plugin.name),
        lastOffset: s.lastOffset,
        headOffset: head,
        lag,
        lastError: s.lastError
      })
    }
    return out
  })

  const redrive = (target: { readonly id: number } | { readonly plugin?: string | undefined }) =>
    Effect.gen(function*() {
      const pluginName = "plugin" in target ? target.plugin : undefined
      if (pluginName !== undefined && !states.has(pluginName)) {
        return yield* new UnknownPlugin({ plugin: pluginName, message: `no plugin named ${pluginName} runs here` })
      }
      const letters = (yield* store.deadLetters(pluginName)).filter((d) => !("id" in target) || d.id === target.id)
      const succeeded: Array<number> = []
      const failed: Array<number> = []
      for (const letter of letters) {
        const state = states.get(letter.plugin)
        if (state === undefined) {
          failed.push(letter.id)
          continue
        }
        const event = DomainEvent.decode(letter.record as DomainEvent.RawRecord).find((e) => e.id === letter.eventId)
        if (event === undefined) {
          yield* store.updateDeadLetter(letter.id, "re-drive: the stored record no longer decodes to this event", 0)
          failed.push(letter.id)
          continue
        }
        const outcome = yield* execute(state.plugin, event, contextFor(state, event), state.policy, onFailure(state)).pipe(
          Effect.withSpan("Plugin.handle", { attributes: { "ocs.plugin": state.plugin.name, "ocs.event": event._tag } })
        )
        if (outcome._tag === "Handled") {
          state.handled++
          yield* store.removeDeadLetter(letter.id)
          succeeded.push(letter.id)
        } else {
          yield* store.updateDeadLetter(letter.id, outcome.error.message, outcome.attempts)
          failed.push(letter.id)
        }
      }
      return { succeeded, failed } satisfies RedriveResult
    })

  const awaitOffset = (offset: number, plugin?: string) => {
    const targets = plugin === undefined ? [...states.values()] : [states.get(plugin)].filter((s) => s !== undefined)
    const reached = Effect.sync(() => targets.every((s) => (s.lastOffset ?? 0) >= offset))
    // Checkpoints are plain fields written by the plugins' fibers: polled every 10 ms.
    return reached.pipe(Effect.repeat({ schedule: Schedule.spaced(10), until: (done) => done }), Effect.asVoid)
  }

  return {
    plugins: [...states.values()].map((s) => ({ name: s.plugin.name, version: s.plugin.version, subscribes: s.plugin.subscribes })),
    metrics,
    deadLetters: store.deadLetters,
    redrive,
    kv: store.kv,
    awaitOffset
  } satisfies PluginRuntimeService
})
