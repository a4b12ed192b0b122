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
import { Effect, Fiber, Layer, Option, Redacted, Result, Schedule, Scope, Stream } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Path from "node:path"
import { EventLog, KafkaEventLog, SqliteEventLog } from "@ocs/event-log"
import { Ingestion, WebhookApps } from "@ocs/ingestion"
import { PluginRuntime } from "@ocs/plugin-sdk"
import { Ids } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { CommerceClient, RateLimiter, RateLimitStore, TransportEvents } from "@ocs/transport"
import * as Admin from "./Admin.ts"
import type { Config } from "./Config.ts"
import { makeSealer, resolveKey } from "./Secrets.ts"
import { Metrics, type ServerMetrics } from "./ServerMetrics.ts"
import { resolveOperations, type RunReport, SyncEngine } from "./SyncEngine.ts"
import { Ownership } from "./Ownership.ts"
import { type App as TenantStoreApp, TenantStore } from "./TenantStore.ts"

export interface RunningServer {
  readonly url: string
  readonly port: number
  readonly webhookUrl: (appId: string) => string
}

const DAY = 24 * 3600 * 1000

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
  Effect.map(TenantStore, (store) => {
    const converted = new WeakMap<TenantStoreApp, WebhookApps.WebhookApp>()
    const toWebhookApp = (app: TenantStoreApp) => {
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
  Fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 })
  const key = resolveKey(config.encryptionKey ?? process.env["OCS_ENCRYPTION_KEY"], config.dataDir)
  if (Result.isFailure(key)) throw key.failure
  const sealer = makeSealer(key.success.key)

  const tenantStore = TenantStore.layer({ filename: f.tenants, sealer })
  const eventLog = config.eventLog.mode === "kafka"
    ? KafkaEventLog.layer({
      brokers: config.eventLog.kafka?.brokers ?? ["127.0.0.1:9092"],
      topic: config.eventLog.kafka?.topic ?? "ocs-events",
      partitions: config.eventLog.kafka?.partitions,
      outboxFilename: f.outbox,
      clientId: "ocs-sync-server"
    })
    : SqliteEventLog.layer({ filename: f.events, dedupeWindowMillis: (config.webhooks.dedupeWindowSeconds ?? 24 * 3600) * 1000 })
  // A 16 MiB page cache: reads are per tenant and small; the file is the source of the rest.
  const readModels = ReadModels.ReadModels.layer({ filename: f.readModels, cacheSizeKiB: 16 * 1024 })
  const base = Layer.mergeAll(tenantStore, eventLog, readModels)

  const events = transportEventsToLog
  const limiter = RateLimiter.RateLimiter.layer({
    safetyMargin: config.rateLimits?.safetyMargin,
    skewAllowanceMs: config.rateLimits?.skewAllowanceMs,
    maxInFlight: config.rateLimits?.maxInFlight,
    overrides: config.rateLimits?.overrides
  }).pipe(Layer.provide(RateLimitStore.RateLimitStore.layerSqlite({ filename: f.rateLimits })), Layer.provide(events))
  const client = CommerceClient.CommerceClient.layer({
    posBaseUrl: config.api.posBaseUrl,
    vpageBaseUrl: config.api.vpageBaseUrl,
    timeoutMs: config.api.timeoutMs
  }).pipe(Layer.provideMerge(limiter), Layer.provide(events), Layer.provide(NodeHttpClient.layerUndici))
  const ingestion = Ingestion.Ingestion.layer({
    maxBodyBytes: config.webhooks.maxBodyBytes,
    sourceAllowlist: config.webhooks.sourceAllowlist,
    trustedProxies: config.webhooks.trustedProxies,
    authFailures: config.webhooks.authFailures
  }).pipe(Layer.provide(webhookAppsFromStore))
  const sync = Layer.unwrap(
    Effect.gen(function*() {
      const operations = yield* resolveOperations(config.sync.resources, config.operations ?? [])
      const metrics = yield* Metrics
      return SyncEngine.layer({
        operations,
        intervalMs: config.sync.intervalSeconds * 1000,
        reconcileMs: config.sync.reconcileSeconds * 1000,
        overlapMs: config.sync.overlapSeconds * 1000,
        pageSize: config.sync.pageSize,
        onRun: (report: RunReport, _operation: string, errorTag: string | undefined) => countRun(metrics, report, errorTag)
      })
    })
  )
  // Plugins read the log on their own (own checkpoints), so they never hold up ingestion or
  // projection; their API calls go through the same client and budgets.
  const plugins = Layer.unwrap(
    Effect.map(TenantStore, (store) =>
      PluginRuntime.PluginRuntime.layerFromConfig({
        filename: f.plugins,
        baseDir: config.baseDir ?? process.cwd(),
        // The plugins this server ships resolve from its own dependencies.
        searchDirs: [Path.resolve(import.meta.dirname, "..")],
        plugins: config.plugins ?? [],
        eventLogFilename: config.eventLog.mode === "kafka" ? f.outbox : f.events,
        tenantAccess: (t) =>
          Effect.map(
            store.business(t.appId, t.businessId),
            Option.map((b) => ({ ...Ids.makeTenant(b.appId, b.businessId), accessToken: b.accessToken }))
          )
      }))
  )
  const shared = config.eventLog.mode === "kafka" ? config.eventLog.kafka?.sharedPulls : undefined
  const ownership = shared === undefined
    ? Ownership.layerAll
    : Ownership.layerKafka({
      brokers: config.eventLog.kafka?.brokers ?? ["127.0.0.1:9092"],
      topic: `${config.eventLog.kafka?.topic ?? "ocs-events"}-owners`,
      partitions: shared.partitions,
      handoverMs: (shared.handoverSeconds ?? 31) * 1000
    })
  return Layer.mergeAll(client, ingestion, sync.pipe(Layer.provide(client), Layer.provideMerge(ownership)), plugins.pipe(Layer.provide(client))).pipe(
    Layer.provideMerge(base),
    Layer.provideMerge(Metrics.layer)
  )
}

const countRun = (metrics: ServerMetrics, report: RunReport, errorTag: string | undefined) => {
  if (report.mode === "skipped") return
  metrics.syncRuns++
  metrics.syncPages += report.pages
  metrics.syncRecords += report.records
  if (errorTag !== undefined) metrics.countError(errorTag)
}

/** Creates the configured tenants that do not exist yet (the demo uses this). */
const seedTenants = (config: Config) =>
  Effect.gen(function*() {
    const store = yield* TenantStore
    for (const app of config.tenants ?? []) {
      const appId = String(app.appId)
      if (Option.isNone(yield* store.app(appId))) yield* store.upsertApp(appId, app.verifyTokens)
      for (const b of app.businesses ?? []) {
        const businessId = String(b.businessId)
        if (Option.isSome(yield* store.business(appId, businessId))) continue
        yield* store.upsertBusiness({
          appId,
          businessId,
          accessToken: b.accessToken,
          version: b.version,
          permissions: b.permissions,
          depots: b.depots,
          grantedAt: b.grantedAt === undefined ? null : Date.parse(b.grantedAt),
          expiresAt: b.expiresAt === undefined ? null : Date.parse(b.expiresAt)
        })
      }
    }
  })

/** Follows webhook records to know when each tenant last heard from the service. */
const tenantActivity = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  const store = yield* TenantStore
  return yield* log.subscribe("tenant-activity", { tenant: "all" }).pipe(
    Stream.filter((d) => d.record.source === "webhook" && d.record.businessId !== null),
    Stream.groupedWithin(500, "1 second"),
    Stream.runForEach((batch) =>
      Effect.gen(function*() {
        // The latest webhook of each tenant in the batch, one store write per tenant.
        const latest = new Map<string, { readonly appId: string; readonly businessId: string; at: number }>()
        for (const { record } of batch) {
          const k = `${record.appId}:${record.businessId}`
          const seen = latest.get(k)
          if (seen === undefined) latest.set(k, { appId: record.appId, businessId: record.businessId!, at: record.receivedAt })
          else seen.at = Math.max(seen.at, record.receivedAt)
        }
        for (const t of latest.values()) yield* store.touchWebhook(t.appId, t.businessId, t.at)
        yield* log.commit("tenant-activity", batch[batch.length - 1]!.checkpoint)
      })
    )
  )
})

/** Token expiry warnings (30, 7 and 1 days before; spec: Authentication 6) and webhook silence. */
export const watchTenants = (silenceAlertMs: number) =>
  Effect.gen(function*() {
    const store = yield* TenantStore
    const now = Date.now()
    for (const b of yield* store.businesses()) {
      if (b.expiresAt !== null) {
        const days = (b.expiresAt - now) / DAY
        for (const threshold of [30, 7, 1]) {
          if (days <= threshold && (yield* store.noticeOnce(b.appId, b.businessId, `expiry-${threshold}`))) {
            const message = days <= 0
              ? `access token of ${b.appId}:${b.businessId} has expired: the business must grant access again`
              : `access token of ${b.appId}:${b.businessId} expires in ${Math.ceil(days)} day(s): ask the business to grant access again`
            yield* Effect.logWarning(message)
            yield* store.recordError({ appId: b.appId, businessId: b.businessId, resource: null, tag: `TokenExpiry${threshold}d`, message })
          }
        }
      }
      const silentSince = b.lastWebhookAt
      if (silentSince !== null && now - silentSince > silenceAlertMs) {
        const day = Math.floor(now / DAY)
        if (yield* store.noticeOnce(b.appId, b.businessId, `silence-${day}`)) {
          const message = `no webhook from ${b.appId}:${b.businessId} for ${Math.round((now - silentSince) / 60000)} minutes: webhooks may be off or failing`
          yield* Effect.logWarning(message)
          yield* store.recordError({ appId: b.appId, businessId: b.businessId, resource: null, tag: "WebhookSilence", message })
        }
      }
    }
  }).pipe(Effect.catch((e) => Effect.logError("tenant watch failed", e)))

/**
 * Runs the server in the current scope: seeds tenants, starts projection, sync and watch
 * loops, and listens. Returns once listening.
 */
export const start = (config: Config) =>
  Effect.gen(function*() {
    const scope = yield* Scope.Scope
    let ready = false
    yield* seedTenants(config)

    const readModels = yield* ReadModels.ReadModels
    const projection = yield* readModels.run("read-models")
    // Runs after the HTTP server has closed and the sync loops have stopped (finalizers run in
    // reverse): project what the last requests and pages appended, so the files a stopped
    // server leaves behind are up to date with its log.
    yield* Effect.addFinalizer(() =>
      Fiber.interrupt(projection).pipe(
        Effect.andThen(readModels.catchUp("read-models")),
        Effect.catch((e) => Effect.logWarning("final projection catch-up failed; it resumes at the next start", e))
      )
    )
    yield* Effect.forkIn(tenantActivity.pipe(Effect.catch((e) => Effect.logError("tenant activity stopped", e))), scope)
    yield* Effect.forkIn(Effect.repeat(watchTenants(config.webhooks.silenceAlertSeconds * 1000), Schedule.spaced("1 hour")), scope)
    const sync = yield* SyncEngine
    yield* sync.start

    const ingestion = yield* Ingestion.Ingestion
    const router = yield* Admin.routes({
      adminKey: config.server.adminKey === undefined ? undefined : Redacted.make(config.server.adminKey),
      ready: () => ready,
      silenceAlertMs: config.webhooks.silenceAlertSeconds * 1000
    })
    const adminListener = yield* NodeHttpServer.makeHandler(router.asHttpEffect(), { scope })

    const server = Http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
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
    })
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
    const url = `http://${config.server.host}:${port}`
    yield* Effect.logInfo(`ocs sync server listening on ${url}`)
    return { url, port, webhookUrl: (appId: string) => `${url}${ingestion.basePath}/${appId}` } satisfies RunningServer
  })

