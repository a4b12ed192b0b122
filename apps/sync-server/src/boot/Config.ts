/**
 * The server's configuration: each section's schema and defaults belong to the package that
 * uses it (`sync`: @ocs/sync SyncOptions; `eventLog`: @ocs/event-log EventLogOptions; `api`
 * and `rateLimits`: @ocs/transport; `tracing`, `logLevel`, `server.heapProfile`:
 * @ocs/observability); this module composes them with the server's own (`server`, `webhooks`,
 * `tenants`, `plugins`) and reads it with @ocs/config: a YAML or JSON file, then `OCS_<PATH>`
 * environment overrides (`OCS_SERVER__PORT=9000`, `OCS_EVENT_LOG__KAFKA__BROKERS=a:9092,b:9092`),
 * every bad field reported with its path and every unknown key with the nearest known name.
 *
 * Durations: a setting names its unit, in seconds (@ocs/config Settings); `api.timeoutMs`,
 * `rateLimits.skewAllowanceMs` and `tracing.exportIntervalMillis` keep the names existing
 * configurations use. Code converts once, where it builds a service's options.
 */
import { SyncOptions } from "@ocs/sync"
import { CommandOptions } from "@ocs/commands"
import { Schema } from "effect"
import * as Path from "node:path"
import { ConfigFile, Settings } from "@ocs/config"
import { EventLogOptions } from "@ocs/event-log"
import { HeapProfile, Telemetry } from "@ocs/observability"
import { PluginLoader } from "@ocs/plugin-runtime"
import { ReadModelsOptions } from "@ocs/read-models"
import { Operation } from "@ocs/protocol"
import { Connect, TenantSeed } from "@ocs/tenant-store"
import { CommerceClient, RateLimiter } from "@ocs/transport"

const { NonNegativeInt, Port, PositiveInt, PositiveNumber } = Settings

export const Config = Schema.Struct({
  server: Schema.Struct({
    host: Schema.String,
    port: Port,
    /** V8 heap profile (@ocs/observability HeapProfile); the server re-executes itself to apply it. */
    heapProfile: Schema.optional(HeapProfile.HeapProfileSetting),
    /** Key for the admin API (header `x-admin-key` or `Authorization: Bearer <key>`). */
    adminKey: Schema.optional(Schema.String.check(Schema.isMinLength(16))),
    /** Limits against slow or greedy clients (see ServerLimits.ts for the defaults). */
    limits: Schema.optional(Schema.Struct({
      headersTimeoutSeconds: Schema.optional(PositiveNumber),
      requestTimeoutSeconds: Schema.optional(PositiveNumber),
      keepAliveTimeoutSeconds: Schema.optional(PositiveNumber),
      maxConnections: Schema.optional(PositiveInt),
      maxConnectionsPerSource: Schema.optional(PositiveInt),
      maxHeaderBytes: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1024))),
      /** 0 turns the body rate check off. */
      minBodyBytesPerSecond: Schema.optional(NonNegativeInt),
      bodyGraceSeconds: Schema.optional(PositiveNumber)
    })),
    /**
     * Serve https from these PEM files (the service requires an https callback). Reloaded on
     * SIGHUP, so a renewed certificate needs no restart.
     */
    tls: Schema.optional(Schema.Struct({ certFile: Schema.String, keyFile: Schema.String })),
    /** `/readyz` answers 503 while the read models are further behind the log than this. */
    readiness: Schema.optional(Schema.Struct({
      maxProjectionLagRecords: Schema.optional(PositiveInt),
      /** Age of the oldest record not projected yet. Default 300. */
      maxProjectionLagSeconds: Schema.optional(PositiveNumber)
    }))
  }),
  /** Folder of the SQLite files (event log, read models, tenants, rate limits). */
  dataDir: Schema.String,
  /**
   * `exclusiveLocking: true` opens the files only this process uses (read models, tenants, rate
   * limits, plugins) in SQLite's exclusive locking mode: no memory-mapped `-shm` file, so reads (the
   * admin API) go on while the disk is stalled; other processes cannot open those files while the
   * server runs (docs/deployment.md, backup). Default false.
   */
  /**
   * `diskProbe` (default true) asks a worker thread whether the data folder takes writes before
   * every SQLite access of the main thread, and fails the access fast when it does not (a
   * stalled disk; docs/architecture.md §4.30). `false` turns it off.
   */
  sqlite: Schema.optional(Schema.Struct({ exclusiveLocking: Schema.optional(Schema.Boolean), diskProbe: Schema.optional(Schema.Boolean) })),
  /** The event log: @ocs/event-log's section (its defaults: `EventLogOptions.defaults`). */
  eventLog: EventLogOptions.Section,
  /** Where the copy is kept: @ocs/read-models' section (SQLite by default; PostgreSQL, docs/postgres.md). */
  readModels: Schema.optional(ReadModelsOptions.Section),
  /** 32 bytes, base64 or hex: encrypts access tokens and verify tokens at rest. */
  encryptionKey: Schema.optional(Schema.String),
  /** The API's base URLs and timeout: @ocs/transport's CommerceClient section. */
  api: CommerceClient.ApiSection,
  /** The rate-limit scheduler: @ocs/transport's RateLimiter section. */
  rateLimits: Schema.optional(RateLimiter.Section),
  /** The sync engine's section: its schema and defaults belong to @ocs/sync (SyncOptions). */
  sync: SyncOptions.Section,
  /** The write path: @ocs/commands' section (CommandOptions). */
  commands: Schema.optional(CommandOptions.Section),
  /** operations the catalogue does not list, declared as data. */
  operations: Schema.optional(Schema.Array(Operation.OperationSpec)),
  webhooks: Schema.Struct({
    /** Source addresses allowed to deliver; absent: any (use behind a filtering proxy). */
    sourceAllowlist: Schema.optional(Schema.Array(Schema.String)),
    trustedProxies: Schema.optional(Schema.Array(Schema.String)),
    maxBodyBytes: Schema.optional(PositiveInt),
    dedupeWindowSeconds: Schema.optional(PositiveNumber),
    /**
     * Deliveries from one source (appId + client address) that fail the verify-token check
     * `limit` times within `windowSeconds` get 429 and are not read until the window ends.
     * Default 20 in 60 s; `limit: 0` turns it off.
     */
    authFailures: Schema.optional(Schema.Struct({
      limit: NonNegativeInt,
      windowSeconds: PositiveNumber
    })),
    /** A delivery not stored within this is answered 503 (the sender delivers again). Default 10. */
    storeTimeoutSeconds: Schema.optional(PositiveNumber),
    /** Bytes of webhook bodies not yet proved by a token, held at once (default 16 MiB; 0: no bound). */
    unverifiedBodyBudgetBytes: Schema.optional(NonNegativeInt),
    /** A tenant without a webhook for this long is flagged as silent. */
    silenceAlertSeconds: PositiveNumber
  }),
  /** Plugins to run: `{ use: "<package name or path>", config?, enabled? }`. */
  plugins: Schema.optional(PluginLoader.PluginEntries),
  /** Where relative plugin paths and package names resolve (default: the config file's folder). */
  baseDir: Schema.optional(Schema.String),
  /** Tenants to create at start when absent (the demo uses this). */
  tenants: Schema.optional(TenantSeed.Section),
  /** Businesses connecting themselves (the grant flow): @ocs/tenant-store's Connect section. */
  connect: Schema.optional(Connect.Section),
  /** Lines below this level are not written (default info). Every line is JSON. */
  logLevel: Schema.optional(Telemetry.LogLevelSetting),
  /** OpenTelemetry traces (docs/architecture.md §4.17): @ocs/observability's section. */
  tracing: Schema.optional(Telemetry.TracingSection)
})
export type Config = typeof Config.Type

export { ConfigError } from "@ocs/config/ConfigFile"

/**
 * Defaults: everything local, embedded SQLite, the simulator's default address. The server's
 * own are written here; each package's section brings its own. The decoded `Config` always
 * holds them, so no call site repeats a fallback.
 */
export const defaults = {
  server: { host: "127.0.0.1", port: 8787 },
  dataDir: ".ocs-data",
  eventLog: EventLogOptions.defaults,
  api: { posBaseUrl: "http://127.0.0.1:8788/pos", vpageBaseUrl: "http://127.0.0.1:8788/vpage" },
  sync: SyncOptions.sectionDefaults,
  webhooks: { silenceAlertSeconds: 24 * 3600 }
} as const

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** A relative data folder in a file is relative to the file; plugins resolve from its folder. */
const onFile = (parsed: unknown, file: string): unknown => {
  if (!isObject(parsed)) return parsed
  const dataDir = parsed["dataDir"]
  return {
    ...parsed,
    ...(typeof dataDir === "string" && !Path.isAbsolute(dataDir) ? { dataDir: Path.resolve(Path.dirname(file), dataDir) } : {}),
    baseDir: Path.dirname(Path.resolve(file))
  }
}

/** Reads a config file (YAML or JSON; optional), applies defaults and environment overrides. */
export const load = (options: {
  readonly file?: string | undefined
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly overrides?: unknown
}) => ConfigFile.load(Config, { ...options, defaults, onFile })
