/**
 * The sync server: everything composed.
 *
 *   webhooks --> ingestion --+
 *                            +--> event log --> read models (projection loop)
 *   pulls (SyncEngine) ------+        |
 *     through the transport's         +--> tenant activity (last webhook per tenant)
 *     rate-limit scheduler
 *
 * One HTTP server: `/webhooks/<appId>` goes to the ingestion's node listener (the fast path),
 * everything else to the admin router. Shutdown: stop accepting, let in-flight requests (and
 * so their appends) finish, stop the loops (each projection batch commits with its
 * checkpoint), then close the files.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, Option, Redacted, Result, Scope } from "effect"
import * as Http from "node:http"
import * as Https from "node:https"
import type * as Net from "node:net"
import * as Path from "node:path"
import { EventLog, KafkaEventLog, SqliteEventLog } from "@ocs/event-log"
import { Ingestion, WebhookApps } from "@ocs/ingestion"
import { PluginRuntime } from "@ocs/plugin-runtime"
import { Ids } from "@ocs/protocol"
import { ReadApi, ReadModels, ReadModelsOptions } from "@ocs/read-models"
import { DiskProbe, SqliteDatabase } from "@ocs/sqlite"
import { CommerceClient, RateLimiter, RateLimitStore, TransportEvents } from "@ocs/transport"
import { Command, CommandEngine, CommandOptions, CommandOwnership } from "@ocs/commands"
import { PluginError } from "@ocs/plugin-sdk"
import * as Admin from "./Admin.ts"
import * as BackgroundLoops from "../ops/BackgroundLoops.ts"
import * as PostgresCopy from "../ops/PostgresCopy.ts"
import * as RelayHealth from "../ops/RelayHealth.ts"
import type { Config } from "../boot/Config.ts"
import * as LoopHealthModule from "@ocs/observability/LoopHealth"
import { LoopHealth } from "@ocs/observability/LoopHealth"
import * as ProjectionLag from "../ops/ProjectionLag.ts"
import * as DataDir from "../boot/DataDir.ts"
import * as ServerLimits from "./ServerLimits.ts"
import * as Sessions from "./console/Sessions.ts"
import * as ServerTls from "./ServerTls.ts"
import * as Connect from "@ocs/tenant-store/Connect"
import { makeSealer, resolveKey } from "@ocs/tenant-store/Secrets"
import { Metrics } from "@ocs/observability/ServerMetrics"
import { Operations, SyncOptions } from "@ocs/sync"
import { type RunReport, SyncEngine } from "@ocs/sync/SyncEngine"
import { Ownership } from "@ocs/sync/Ownership"
import * as Telemetry from "@ocs/observability/Telemetry"
import * as SharedRateLimits from "@ocs/tenant-store/SharedRateLimits"
import * as SharedSyncState from "@ocs/tenant-store/SharedSyncState"
import * as SharedTenants from "@ocs/tenant-store/SharedTenants"
import * as SqliteNotices from "@ocs/tenant-store/SqliteNotices"
import * as SqliteSyncState from "@ocs/tenant-store/SqliteSyncState"
import { TenantDatabase } from "@ocs/tenant-store/TenantDatabase"
import { type App as RegisteredApp, TenantRegistry } from "@ocs/tenant-store/TenantRegistry"

export { watchTenants } from "../ops/BackgroundLoops.ts"

export interface RunningServer {
  readonly url: string
  readonly port: number
  readonly webhookUrl: (appId: string) => string
}

/** Files of the data folder. */
export const files = (dataDir: string) => ({
  tenants: Path.join(dataDir, "tenants.sqlite"),
  events: Path.join(dataDir, "events.sqlite"),
  outbox: Path.join(dataDir, "outbox.sqlite"),
  readModels: Path.join(dataDir, "read-models.sqlite"),
  rateLimits: Path.join(dataDir, "rate-limits.sqlite"),
  plugins: Path.join(dataDir, "plugins.sqlite")
})

/** Transport audit events go to the log as system records of their tenant. */
const transportEventsToLog = Layer.effect(
  TransportEvents.TransportEvents,
  Effect.map(EventLog.EventLog, (log) =>
    TransportEvents.TransportEvents.of({
      emit: (event) => {
        return log.append([{
          appId: event.appId,
          businessId: event.businessId,
          source: "system",
          type: `transport.${event._tag}`,
          body: JSON.stringify(event, (_, v) => (typeof v === "bigint" ? v.toString() : v))
        }]).pipe(
          Effect.andThen(event._tag === "LockTaken" || event._tag === "WarningReceived" ? Effect.logWarning(`transport: ${event._tag}`).pipe(Effect.annotateLogs({ key: "key" in event ? event.key : "" })) : Effect.void),
          Effect.catch((e) => Effect.logError("could not append a transport event", e))
        )
      }
    }))
)

/**
 * The ingestion learns applications and verify tokens from the tenant store, synchronously
 * from its cache of opened applications (no effect per delivery). The same cached App gives
 * the same WebhookApp object, so the receiver's per-app token digests are computed once.
 */
const webhookAppsFromStore = Layer.effect(
  WebhookApps.WebhookApps,
  Effect.map(TenantRegistry, (store) => {
    const converted = new WeakMap<RegisteredApp, WebhookApps.WebhookApp>()
    const toWebhookApp = (app: RegisteredApp) => {
      let w = converted.get(app)
      if (w === undefined) {
        w = { appId: app.appId, enabled: app.enabled, verifyTokens: app.verifyTokens.map(Redacted.value) }
        converted.set(app, w)
      }
      return w
    }
    return WebhookApps.WebhookApps.of({
      lookup: (appId) => {
        const found = store.appCached(appId)
        return Result.isSuccess(found)
          ? Result.succeed(Option.map(found.success, toWebhookApp))
          : Result.fail(new WebhookApps.WebhookAppsUnavailable({ message: found.failure.message }))
      }
    })
  })
)

/** Builds every service of the server from its configuration. */
export const layer = (config: Config) => {
  const f = files(config.dataDir)
  // Owner-only: an existing folder with wider modes is tightened (boot/DataDir.ts).
  DataDir.secure(config.dataDir)
  const key = resolveKey(config.encryptionKey ?? process.env["OCS_ENCRYPTION_KEY"], config.dataDir)
  if (Result.isFailure(key)) throw key.failure
  const sealer = makeSealer(key.success.key)

  // One supervisor for every loop of the server, the Kafka relay and the plugins' subscriptions
  // included, so that /metrics and /readyz show all of them.
  const health = LoopHealthModule.make()
  // One layer value (built once, wherever it is provided).
  // Both modes drop a redelivered webhook within the same window (`webhooks.dedupeWindowSeconds`).
  const dedupeWindowMillis = (config.webhooks.dedupeWindowSeconds ?? 24 * 3600) * 1000
  const kafkaLog = config.eventLog.mode === "kafka"
    ? KafkaEventLog.layer({
      dedupeWindowMillis,
      brokers: config.eventLog.kafka.brokers,
      topic: config.eventLog.kafka.topic,
      partitions: config.eventLog.kafka.partitions,
      maxRequestBytes: config.eventLog.kafka.maxRequestBytes,
      relayDownAfterMillis: config.eventLog.kafka.relayDownAfterSeconds === undefined ? undefined : config.eventLog.kafka.relayDownAfterSeconds * 1000,
      outboxFilename: f.outbox,
      clientId: "ocs-sync-server",
      supervise: health.supervise
    })
    : undefined
  const eventLog = kafkaLog ?? SqliteEventLog.layer({ filename: f.events, dedupeWindowMillis })
  const sharing = config.eventLog.mode === "kafka" ? config.eventLog.kafka.sharedPulls : undefined
  // Files only this process opens, on the main thread: with exclusive locking they have no
  // memory-mapped -shm, so their reads go on while the disk is stalled (docs/architecture.md §4.30). The event log and the outbox are shared with their
  // writer thread: never exclusive.
  const ownFiles = Layer.succeed(SqliteDatabase.Locking, { exclusive: config.sqlite?.exclusiveLocking ?? false })
  // Unless `sqlite.diskProbe: false`, every SQLite handle of the server asks a worker thread
  // whether the disk answers before it touches its file, and fails fast instead of waiting on a
  // stalled disk (docs/architecture.md §4.30).
  const diskStall = config.sqlite?.diskProbe !== false
    ? Layer.effect(SqliteDatabase.DiskHealth, DiskProbe.make({ folder: config.dataDir }))
    : Layer.empty
  // Servers that share pulls share the tenant registry (tokens sealed) and the sync state, so
  // the admin API of any server changes all and a takeover resumes the cursor.
  const localRegistry = TenantRegistry.layer({ sealer })
  // Built one after the other, the event log first (as the topics were always created): a
  // broker that creates several topics at once can answer that it does not host them yet.
  const stores = sharing === undefined || kafkaLog === undefined
    ? Layer.merge(localRegistry, SqliteSyncState.layer)
    : SharedSyncState.layer({
      brokers: config.eventLog.kafka.brokers,
      topic: `${config.eventLog.kafka.topic}-sync-state`
    }).pipe(
      Layer.provideMerge(SharedTenants.layer({
        brokers: config.eventLog.kafka.brokers,
        topic: `${config.eventLog.kafka.topic}-tenants`,
        sealer
      }).pipe(Layer.provide(localRegistry))),
      Layer.provide(SqliteSyncState.layer),
      // The relay's progress: a shared cursor waits for the pages before it (SharedSyncState.ts).
      Layer.provide(kafkaLog)
    )
  const tenantState = Layer.mergeAll(TenantRegistry.layerSyncTenants.pipe(Layer.provideMerge(stores)), SqliteNotices.layer).pipe(
    Layer.provide(TenantDatabase.layer({ filename: f.tenants }).pipe(Layer.provide(ownFiles)))
  )
  // A 16 MiB page cache: reads are per tenant and small; the file is the source of the rest.
  // Only this process writes the file: a short busy timeout, so that a lock someone else takes
  // on it fails the projection (restarted, shown down) instead of holding the main thread.
  // Over Kafka the consumer's fetches and the relay's linger already gather records, so the
  // projection waits less for a fuller batch (lag; docs/architecture.md §4.18).
  const readModels = ReadModels.ReadModels.layer({
    filename: f.readModels,
    cacheSizeKiB: 16 * 1024,
    busyTimeoutMillis: 100,
    maxBatchWaitMillis: config.eventLog.mode === "kafka" ? 50 : undefined
  }).pipe(Layer.provide(ownFiles))
  const base = Layer.mergeAll(tenantState, eventLog, readModels)

  const events = transportEventsToLog
  // Servers that share pulls share their rate-limit locks too (a lock one receives holds all).
  const localRateLimitStore = RateLimitStore.RateLimitStore.layerSqlite({ filename: f.rateLimits }).pipe(Layer.provide(ownFiles))
  const rateLimitStore = sharing === undefined ? localRateLimitStore : SharedRateLimits.layer({
    brokers: config.eventLog.kafka.brokers,
    topic: `${config.eventLog.kafka.topic}-rate-limits`
  }).pipe(Layer.provide(localRateLimitStore))
  const limiter = RateLimiter.RateLimiter.layer({
    safetyMargin: config.rateLimits?.safetyMargin,
    skewAllowanceMs: config.rateLimits?.skewAllowanceMs,
    maxInFlight: config.rateLimits?.maxInFlight,
    overrides: config.rateLimits?.overrides
  }).pipe(Layer.provide(rateLimitStore), Layer.provide(events))
  const client = CommerceClient.CommerceClient.layer({
    posBaseUrl: config.api.posBaseUrl,
    vpageBaseUrl: config.api.vpageBaseUrl,
    timeoutMs: config.api.timeoutMs
  }).pipe(Layer.provideMerge(limiter), Layer.provide(events), Layer.provide(NodeHttpClient.layerUndici))
  const ingestion = Ingestion.Ingestion.layer({
    maxBodyBytes: config.webhooks.maxBodyBytes,
    storeTimeoutMillis: config.webhooks.storeTimeoutSeconds === undefined ? undefined : config.webhooks.storeTimeoutSeconds * 1000,
    sourceAllowlist: config.webhooks.sourceAllowlist,
    trustedProxies: config.webhooks.trustedProxies,
    authFailures: config.webhooks.authFailures,
    unverifiedBodyBudgetBytes: config.webhooks.unverifiedBodyBudgetBytes
  }).pipe(Layer.provide(webhookAppsFromStore))
  const sync = Layer.unwrap(
    Effect.gen(function*() {
      const operations = yield* Operations.resolve(config.sync.resources, config.operations ?? [])
      const metrics = yield* Metrics
      const health = yield* LoopHealth
      return SyncEngine.layer(SyncOptions.fromSection(config.sync, {
        runLoop: health.supervise,
        operations,
        declared: config.operations ?? [],
        onRun: (report: RunReport, operation: string, errorTag: string | undefined) => metrics.countRun(report, operation, errorTag)
      }))
    })
  )
  // The write path (docs/architecture.md §4.30): commands sent with the tenant's token, through
  // the same client and budgets; their ledger is this log.
  const commandsLayer = CommandEngine.CommandEngine.layer(CommandOptions.fromSection(config.commands)).pipe(
    Layer.provide(Layer.effect(CommandEngine.CommandTenants, Effect.map(TenantRegistry, (store) => CommandEngine.CommandTenants.of({
      access: (t) =>
        Effect.flatMap(
          store.business(t.appId, t.businessId).pipe(
            Effect.mapError((e) => new Command.NoAccess({ ...t, message: `the tenant store failed: ${e.message}` }))
          ),
          (found): Effect.Effect<CommerceClient.TenantAccess, Command.NoAccess> =>
            Option.isNone(found)
              ? Effect.fail(new Command.NoAccess({ ...t, message: `no tenant ${t.appId}:${t.businessId}` }))
              : Effect.succeed({ ...Ids.makeTenant(found.value.appId, found.value.businessId), accessToken: found.value.accessToken })
        ),
      // The grant (docs/architecture.md §4.32): a command outside it is refused before it is stored.
      grant: (t) =>
        store.business(t.appId, t.businessId).pipe(
          Effect.map(Option.map((b) => ({ permissions: b.permissions, depots: b.depots }))),
          Effect.orElseSucceed(() => Option.none())
        )
    }))))
  )
  const shared = config.eventLog.mode === "kafka" ? config.eventLog.kafka.sharedPulls : undefined
  const ownership = shared === undefined
    ? Ownership.layerAll
    : Ownership.layerKafka({
      brokers: config.eventLog.kafka.brokers,
      topic: `${config.eventLog.kafka.topic}-owners`,
      partitions: shared.partitions,
      handoverMs: (shared.handoverSeconds ?? 31) * 1000
    })
  // Servers that share pulls share the command ledger too (docs/architecture.md §4.31): every
  // server follows the log's commands, and a tenant's commands are sent by the owner of its pulls.
  const commandOwnership = shared === undefined ? Layer.empty : Layer.effect(
    CommandOwnership.CommandOwnership,
    Effect.map(Ownership, (o) => CommandOwnership.CommandOwnership.of({ owns: (t) => o.owns(t.appId, t.businessId) }))
  ).pipe(Layer.provide(ownership))
  // One engine, shared by the admin routes and the plugins (layers are memoized by reference).
  const commands = commandsLayer.pipe(Layer.provide(client), Layer.provide(CommandEngine.CommandCopy.layerReadModels), Layer.provide(commandOwnership))
  // Plugins read the log on their own (own checkpoints), so they never hold up ingestion or
  // projection; their API calls go through the same client and budgets.
  const plugins = Layer.unwrap(
    Effect.map(Effect.all([TenantRegistry, CommandEngine.CommandEngine]), ([store, engine]) =>
      PluginRuntime.PluginRuntime.layerFromConfig({
        // ctx.commands: keyed by plugin, event and the plugin's key, so a redelivery is the same command.
        commands: {
          send: (tenant, r) =>
            engine.submit({ tenant, kind: r.kind, payload: r.payload, requestedBy: { type: "plugin", name: r.plugin }, idempotencyKey: Command.pluginKey(r.plugin, r.eventId, r.key) }).pipe(
              Effect.flatMap(({ command }) => engine.outcome(tenant, command.id)),
              Effect.map((c) => ({ id: c.id, kind: c.kind, state: c.state, entityId: c.entityId, reason: c.reason })),
              Effect.catch((e) =>
                Effect.fail(new PluginError.CommandRefused({
                  reason: e._tag === "InvalidCommand" || e._tag === "IdempotencyKeyReused" || e._tag === "NotGranted" || e._tag === "PreconditionFailed" ? e._tag : "Unavailable",
                  issues: e._tag === "InvalidCommand" ? e.issues : e._tag === "NotGranted" || e._tag === "PreconditionFailed" ? [{ path: e.path, message: e.message }] : [],
                  message: e.message
                }))
              )
            )
        },
        filename: f.plugins,
        baseDir: config.baseDir ?? process.cwd(),
        // The plugins this server ships resolve from its own dependencies.
        searchDirs: [Path.resolve(import.meta.dirname, "../..")],
        plugins: config.plugins ?? [],
        supervise: health.supervise,
        // The read models compare webhooks and pulls with the copy and relay what changed:
        // plugins see one event per change, whichever came first (docs/architecture.md §4.14).
        changeStream: true,
        tenantAccess: (t) =>
          Effect.map(
            store.business(t.appId, t.businessId),
            Option.map((b) => ({ ...Ids.makeTenant(b.appId, b.businessId), accessToken: b.accessToken }))
          )
      }))
  ).pipe(Layer.provide(ownFiles))
  return Layer.mergeAll(client, ingestion, sync.pipe(Layer.provide(client), Layer.provideMerge(ownership)), plugins.pipe(Layer.provide(client), Layer.provide(commands)), commands).pipe(
    Layer.provideMerge(base),
    Layer.provideMerge(Layer.merge(Metrics.layer, Layer.succeed(LoopHealth, health))),
    // Below everything: every service and every fiber of the server sees the one metric
    // registry and (when configured) the OTLP tracer.
    Layer.provideMerge(Telemetry.layer(config)),
    Layer.provideMerge(diskStall)
  )
}

/** Creates the configured tenants that do not exist yet (the demo uses this). */
const seedTenants = (config: Config) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    for (const app of config.tenants ?? []) {
      const appId = String(app.appId)
      const connect = { secretKey: app.secretKey, publicUrl: app.publicUrl }
      const existing = yield* store.app(appId)
      if (Option.isNone(existing)) yield* store.upsertApp(appId, app.verifyTokens, true, connect)
      else if (connect.secretKey !== undefined || connect.publicUrl !== undefined) {
        // The grant flow's fields given in the config apply at every start, like settings.
        yield* store.upsertApp(appId, existing.value.verifyTokens.map(Redacted.value), existing.value.enabled, connect)
      }
      for (const b of app.businesses ?? []) {
        const businessId = String(b.businessId)
        // Settings given in the config apply at every start (the admin API changes them until then).
        if (Option.isSome(yield* store.business(appId, businessId))) {
          if (b.settings !== undefined) yield* store.setSettings(appId, businessId, b.settings)
          continue
        }
        yield* store.upsertBusiness({
          appId,
          businessId,
          accessToken: b.accessToken,
          version: b.version,
          permissions: b.permissions,
          depots: b.depots,
          pages: b.pages,
          grantedAt: b.grantedAt === undefined ? null : Date.parse(b.grantedAt),
          expiresAt: b.expiresAt === undefined ? null : Date.parse(b.expiresAt)
        })
        if (b.settings !== undefined) yield* store.setSettings(appId, businessId, b.settings)
      }
    }
  })

/**
 * Runs the server in the current scope: seeds tenants, starts projection, sync and watch
 * loops, and listens. Returns once listening.
 */
export const start = (config: Config) =>
  Effect.gen(function*() {
    const scope = yield* Scope.Scope
    let ready = false
    yield* seedTenants(config)

    const sync = yield* SyncEngine
    const lag = yield* ProjectionLag.make({
      logFilename: config.eventLog.mode === "kafka" ? files(config.dataDir).outbox : files(config.dataDir).events,
      readModels: yield* ReadModels.ReadModels,
      consumer: "read-models",
      relayTopic: config.eventLog.mode === "kafka" ? config.eventLog.kafka.topic : undefined
    })
    // A read-models file started empty over a log that already holds records (the old file was
    // removed): those records are history, their changes are in the log already; they are
    // projected but not compared again (docs/architecture.md §4.14). SQLite log only: over Kafka
    // offsets are topic positions.
    if (config.eventLog.mode !== "kafka") {
      const readModels = yield* ReadModels.ReadModels
      const head = yield* lag.head
      if (Option.isNone(yield* readModels.checkpoint("read-models")) && Option.isSome(head) && head.value > 0) {
        yield* readModels.historyUntil(head.value)
        yield* Effect.logInfo(`read models start empty over ${head.value} log records: projected as history, not compared for changes`)
      }
    }
    // Kafka mode: the relay retries inside itself; its own status says when it keeps failing.
    const relay = yield* Effect.serviceOption(KafkaEventLog.RelayProgress)
    if (Option.isSome(relay)) (yield* LoopHealth).watch("event-log-relay", RelayHealth.check(relay.value))
    yield* BackgroundLoops.start({
      silenceAlertMs: config.webhooks.silenceAlertSeconds * 1000,
      consumer: "read-models",
      onWebhooksEnabled: (appId) => sync.gapFill({ appId }, "webhooksEnabled"),
      activityOnProjection: config.eventLog.mode === "kafka",
      // Over Kafka the projection resumes from the topic position it saved with its last batch.
      catchUpOnClose: config.eventLog.mode !== "kafka",
      tokenCheck: {
        posBaseUrl: config.api.posBaseUrl,
        timeoutMs: config.api.timeoutMs,
        everyMs: (config.connect?.checkIntervalSeconds ?? Connect.defaults.checkIntervalSeconds) * 1000
      }
    })
    yield* sync.start
    // `readModels.store: postgres`: the copy is also projected into PostgreSQL, and the admin read routes answer from it.
    const postgres = ReadModelsOptions.postgresOf(config.readModels)
    // Kafka mode: the servers share one copy, each projecting the partitions its group gives it.
    const postgresReads = postgres === undefined ? undefined : yield* PostgresCopy.start(
      postgres,
      config.eventLog.mode === "kafka"
        ? { brokers: config.eventLog.kafka.brokers, topic: config.eventLog.kafka.topic, partitions: config.eventLog.kafka.partitions }
        : undefined
    )

    const ingestion = yield* Ingestion.Ingestion
    const router = yield* Admin.routes({
      adminKey: config.server.adminKey === undefined ? undefined : Redacted.make(config.server.adminKey),
      ready: () => ready,
      readiness: {
        loops: yield* LoopHealth,
        lag,
        maxLagRecords: config.server.readiness?.maxProjectionLagRecords,
        maxLagSeconds: config.server.readiness?.maxProjectionLagSeconds ?? 300,
        webhookStore: ingestion.storeHealth
      },
      silenceAlertMs: config.webhooks.silenceAlertSeconds * 1000,
      syncTimes: { intervalMs: config.sync.intervalSeconds * 1000, reconcileMs: config.sync.reconcileSeconds * 1000 },
      sessions: Sessions.make({ secure: config.server.tls !== undefined }),
      connect: {
        posBaseUrl: config.api.posBaseUrl,
        grantPageUrl: config.connect?.grantPageUrl ?? Connect.grantPageNextTo(config.api.posBaseUrl),
        states: Connect.makeStates({
          ttlMs: (config.connect?.stateTtlSeconds ?? Connect.defaults.stateTtlSeconds) * 1000,
          maxPending: config.connect?.maxPendingStates ?? Connect.defaults.maxPendingStates
        }),
        timeoutMs: config.api.timeoutMs
      }
    }).pipe(postgresReads === undefined ? (routes) => routes : Effect.provideService(ReadApi.ReadApiService, postgresReads))
    const adminListener = yield* NodeHttpServer.makeHandler(router.asHttpEffect(), { scope })

    const listener = (req: Http.IncomingMessage, res: Http.ServerResponse) => {
      const url = req.url ?? "/"
      if (ingestion.isWebhookPath(url)) return ingestion.nodeListener(req, res)
      // Exact paths only: the router would take `/healthz/` as `/healthz`. A trailing slash
      // is another resource (404), never a redirect.
      const path = url.split("?")[0]!
      if (path.length > 1 && path.endsWith("/")) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}')
        return
      }
      adminListener(req, res)
    }
    const tls = config.server.tls
    const credentials = tls === undefined ? undefined : yield* ServerTls.read(tls)
    const server = credentials === undefined
      ? Http.createServer(ServerLimits.serverOptions(config.server.limits))
      : Https.createServer({ ...ServerLimits.serverOptions(config.server.limits), ...credentials })
    if (tls !== undefined) yield* ServerTls.reloadOnHangup(server as Https.Server, tls)
    ServerLimits.apply(server, config.server.limits, {
      peerKind: ingestion.peerKind,
      clientOf: (peer, forwardedFor) => ingestion.sourceOf(peer, forwardedFor).client
    }, listener)
    const port = yield* Effect.acquireRelease(
      Effect.callback<number, Error>((resume) => {
        server.once("error", (e) => resume(Effect.fail(e)))
        server.listen(config.server.port, config.server.host, () => resume(Effect.succeed((server.address() as Net.AddressInfo).port)))
      }),
      () =>
        Effect.callback<void>((resume) => {
          // Graceful: no new connections; idle keep-alive sockets close now, busy ones after
          // their response; give stragglers 10 s.
          ready = false
          server.close(() => resume(Effect.void))
          server.closeIdleConnections()
          const force = setTimeout(() => server.closeAllConnections(), 10_000)
          force.unref()
        })
    )
    ready = true
    const url = `${credentials === undefined ? "http" : "https"}://${config.server.host}:${port}`
    yield* Effect.logInfo(`ocs sync server listening on ${url}`)
    return { url, port, webhookUrl: (appId: string) => `${url}${ingestion.basePath}/${appId}` } satisfies RunningServer
  })

