/**
 * The server's configuration: a YAML or JSON file, then environment overrides, decoded with
 * Schema so that every bad field is reported with its path. Unknown keys are refused at any
 * depth, each with its path and the nearest known name (./StrictKeys.ts): a misspelt key
 * would otherwise be dropped and its setting silently left at the default.
 *
 * Environment overrides: `OCS_<PATH>` with `__` between levels, e.g. `OCS_SERVER__PORT=9000`,
 * `OCS_EVENT_LOG__MODE=kafka`, `OCS_EVENT_LOG__KAFKA__BROKERS=127.0.0.1:9092,127.0.0.1:9093`.
 * Keys are matched case-insensitively with underscores removed (`EVENT_LOG` -> `eventLog`).
 *
 * Durations: a setting names its unit, in seconds (`intervalSeconds`, `storeTimeoutSeconds`);
 * `api.timeoutMs`, `rateLimits.skewAllowanceMs` and `tracing.exportIntervalMillis` keep the
 * names existing configurations use. Code converts once, where it builds a service's options.
 */
import { SyncOptions, TenantSettings } from "@ocs/sync"
import { Effect, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as Yaml from "yaml"
import { PluginLoader } from "@ocs/plugin-runtime"
import { Ids, Operation } from "@ocs/protocol"
import * as StrictKeys from "./StrictKeys.ts"

const Port = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65535 }))
const PositiveNumber = Schema.Finite.check(Schema.isGreaterThan(0))

/** An appId or businessId: a positive integer, as a number, bigint or string of digits. */
const IdInput = Schema.Union([Schema.String, Schema.Number, Schema.BigInt]).check(
  Schema.makeFilter((u) => Ids.normalize(typeof u === "string" ? u.trim() : u) !== undefined || "must be a positive integer")
)

export const BusinessConfig = Schema.Struct({
  businessId: IdInput,
  accessToken: Schema.String.check(Schema.isMinLength(1)),
  version: Schema.optional(Schema.String),
  permissions: Schema.optional(Schema.Array(Schema.String)),
  depots: Schema.optional(Schema.Array(Schema.String)),
  grantedAt: Schema.optional(Schema.String),
  expiresAt: Schema.optional(Schema.String),
  /** This tenant's own sync settings (@ocs/sync TenantSettings); absent fields keep `sync`'s. */
  settings: Schema.optional(TenantSettings.TenantSettings)
})

export const AppConfig = Schema.Struct({
  appId: IdInput,
  verifyTokens: Schema.Array(Schema.String.check(Schema.isMinLength(1))),
  businesses: Schema.optional(Schema.Array(BusinessConfig))
})

export const Config = Schema.Struct({
  server: Schema.Struct({
    host: Schema.String,
    port: Port,
    /**
     * V8 heap profile (./HeapProfile.ts): "compact" (default in SQLite mode), "throughput"
     * (default in Kafka mode) or "as-launched". The server re-executes itself to apply it.
     */
    heapProfile: Schema.optional(Schema.Literals(["compact", "throughput", "as-launched"])),
    /** Key for the admin API (header `x-admin-key` or `Authorization: Bearer <key>`). */
    adminKey: Schema.optional(Schema.String.check(Schema.isMinLength(16))),
    /** Limits against slow or greedy clients (see ServerLimits.ts for the defaults). */
    limits: Schema.optional(Schema.Struct({
      headersTimeoutSeconds: Schema.optional(PositiveNumber),
      requestTimeoutSeconds: Schema.optional(PositiveNumber),
      keepAliveTimeoutSeconds: Schema.optional(PositiveNumber),
      maxConnections: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
      maxConnectionsPerSource: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
      maxHeaderBytes: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1024))),
      /** 0 turns the body rate check off. */
      minBodyBytesPerSecond: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
      bodyGraceSeconds: Schema.optional(PositiveNumber)
    })),
    /**
     * Serve https from these PEM files (the service requires an https callback). Reloaded on
     * SIGHUP, so a renewed certificate needs no restart.
     */
    tls: Schema.optional(Schema.Struct({ certFile: Schema.String, keyFile: Schema.String })),
    /** `/readyz` answers 503 while the read models are further behind the log than this. */
    readiness: Schema.optional(Schema.Struct({
      maxProjectionLagRecords: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
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
  sqlite: Schema.optional(Schema.Struct({ exclusiveLocking: Schema.optional(Schema.Boolean) })),
  eventLog: Schema.Struct({
    mode: Schema.Literals(["sqlite", "kafka"]),
    /** Read in Kafka mode; `brokers` and `topic` default to `defaults.eventLog.kafka`. */
    kafka: Schema.Struct({
        brokers: Schema.Array(Schema.String).check(Schema.isMinLength(1)),
        topic: Schema.String.check(Schema.isMinLength(1)),
        partitions: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
        /**
         * Caps the relay's requests (bytes). Default: the topic's `max.message.bytes` as the
         * broker reports it (Kafka's default 1,048,588 when it cannot be read).
         */
        maxRequestBytes: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1024))),
        /** The relay counts as down (ocs_loop_up 0, /readyz 503) once it has failed this long. Default 30. */
        relayDownAfterSeconds: Schema.optional(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))),
        /**
         * Several servers on this topic: each tenant's pulls are owned by one of them at a time
         * (a Kafka consumer group hands out tenant partitions). A server that gains a tenant
         * waits `handoverSeconds` (default 31: the default rate window and a second) first.
         */
        sharedPulls: Schema.optional(
          Schema.Struct({
            partitions: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
            handoverSeconds: Schema.optional(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)))
          })
        )
      })
  }),
  /** 32 bytes, base64 or hex: encrypts access tokens and verify tokens at rest. */
  encryptionKey: Schema.optional(Schema.String),
  api: Schema.Struct({
    posBaseUrl: Schema.String,
    vpageBaseUrl: Schema.String,
    timeoutMs: Schema.optional(PositiveNumber)
  }),
  rateLimits: Schema.optional(
    Schema.Struct({
      safetyMargin: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
      skewAllowanceMs: Schema.optional(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))),
      maxInFlight: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
      overrides: Schema.optional(Schema.Record(Schema.String, Operation.RateLimit))
    })
  ),
  /** The sync engine's section: its schema and defaults belong to @ocs/sync (SyncOptions). */
  sync: SyncOptions.Section,
  /** operations the catalogue does not list, declared as data. */
  operations: Schema.optional(Schema.Array(Operation.OperationSpec)),
  webhooks: Schema.Struct({
    /** Source addresses allowed to deliver; absent: any (use behind a filtering proxy). */
    sourceAllowlist: Schema.optional(Schema.Array(Schema.String)),
    trustedProxies: Schema.optional(Schema.Array(Schema.String)),
    maxBodyBytes: Schema.optional(Schema.Int.check(Schema.isGreaterThan(0))),
    dedupeWindowSeconds: Schema.optional(PositiveNumber),
    /**
     * Deliveries from one source (appId + client address) that fail the verify-token check
     * `limit` times within `windowSeconds` get 429 and are not read until the window ends.
     * Default 20 in 60 s; `limit: 0` turns it off.
     */
    authFailures: Schema.optional(Schema.Struct({
      limit: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
      windowSeconds: PositiveNumber
    })),
    /** A delivery not stored within this is answered 503 (the sender delivers again). Default 10. */
    storeTimeoutSeconds: Schema.optional(PositiveNumber),
    /** Bytes of webhook bodies not yet proved by a token, held at once (default 16 MiB; 0: no bound). */
    unverifiedBodyBudgetBytes: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
    /** A tenant without a webhook for this long is flagged as silent. */
    silenceAlertSeconds: PositiveNumber
  }),
  /** Plugins to run: `{ use: "<package name or path>", config?, enabled? }`. */
  plugins: Schema.optional(PluginLoader.PluginEntries),
  /** Where relative plugin paths and package names resolve (default: the config file's folder). */
  baseDir: Schema.optional(Schema.String),
  /** Tenants to create at start when absent (the demo uses this). */
  tenants: Schema.optional(Schema.Array(AppConfig)),
  /** Lines below this level are not written (default info). Every line is JSON. */
  logLevel: Schema.optional(Schema.Literals(["debug", "info", "warning", "error"])),
  /**
   * OpenTelemetry traces (docs/architecture.md §4.17). Off unless `otlpEndpoint` is set: the
   * base URL of an OTLP/HTTP collector (`/v1/traces` is appended), e.g. http://127.0.0.1:4318.
   */
  tracing: Schema.optional(Schema.Struct({
    otlpEndpoint: Schema.optional(Schema.String),
    /** Share of traces started here that are exported, 0 to 1. Default 0.1. */
    sampleRatio: Schema.optional(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 }))),
    serviceName: Schema.optional(Schema.String),
    /** How often spans are sent; default 5 s. */
    exportIntervalMillis: Schema.optional(PositiveNumber)
  }))
})
export type Config = typeof Config.Type

export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  message: Schema.String
}) {}

/**
 * Defaults: everything local, embedded SQLite, the simulator's default address; in Kafka mode
 * a local broker and the topic `ocs-events`. The one place these values are written: the
 * decoded `Config` always holds them, so no call site repeats a fallback.
 */
export const defaults = {
  server: { host: "127.0.0.1", port: 8787 },
  dataDir: ".ocs-data",
  eventLog: { mode: "sqlite", kafka: { brokers: ["127.0.0.1:9092"], topic: "ocs-events" } },
  api: { posBaseUrl: "http://127.0.0.1:8788/pos", vpageBaseUrl: "http://127.0.0.1:8788/vpage" },
  sync: SyncOptions.sectionDefaults,
  webhooks: { silenceAlertSeconds: 24 * 3600 }
} as const

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Deep merge: objects merge, everything else replaces. */
export const merge = (base: unknown, over: unknown): unknown => {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over
  const out: Record<string, unknown> = { ...base }
  for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v)
  return out
}

const norm = (s: string) => s.toLowerCase().replaceAll("_", "")

const topLevel = new Set(Object.keys(Config.fields).map(norm))

/**
 * Applies `OCS_A__B=value` variables onto a raw config object (paths matched loosely). Only
 * variables whose first part names a top-level setting are read (`OCS_SERVER__...`,
 * `OCS_ENCRYPTION_KEY`): other `OCS_` variables belong to the launcher, the tests or the heap
 * profile's re-execution. Below that first part a misspelt name is refused like one in a file.
 */
export const applyEnv = (raw: unknown, env: Readonly<Record<string, string | undefined>>): unknown => {
  let out = raw
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith("OCS_") || value === undefined || name === "OCS_CONFIG") continue
    const path = name.slice(4).split("__").filter((p) => p.length > 0)
    if (path.length === 0 || !topLevel.has(norm(path[0]!))) continue
    out = setPath(out, path, parseEnvValue(value))
  }
  return out
}

const parseEnvValue = (value: string): unknown => {
  const t = value.trim()
  if (/^-?\d+(\.\d+)?$/.test(t) && Number.isSafeInteger(Math.trunc(Number(t)))) return Number(t)
  if (t === "true" || t === "false") return t === "true"
  if (t.startsWith("[") || t.startsWith("{")) {
    try {
      return JSON.parse(t)
    } catch {
      return value
    }
  }
  // A comma list becomes an array only where the schema wants one; strings stay strings.
  return value
}

const ARRAY_KEYS = new Set(["brokers", "resources", "sourceallowlist", "trustedproxies", "verifytokens"])

const setPath = (obj: unknown, path: ReadonlyArray<string>, value: unknown): unknown => {
  const o = isObject(obj) ? { ...obj } : {}
  const [head, ...rest] = path
  const existing = Object.keys(o).find((k) => norm(k) === norm(head!))
  const key = existing ?? camel(head!)
  if (rest.length === 0) {
    o[key] = typeof value === "string" && ARRAY_KEYS.has(norm(key)) ? value.split(",").map((s) => s.trim()) : value
  } else {
    o[key] = setPath(o[key], rest, value)
  }
  return o
}

const camel = (s: string) => s.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())

const decode = Schema.decodeUnknownEffect(Config)

/** Reads a config file (YAML or JSON; optional), applies defaults and environment overrides. */
export const load = Effect.fnUntraced(function*(options: {
  readonly file?: string | undefined
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly overrides?: unknown
}) {
  let raw: unknown = defaults
  const file = options.file
  if (file !== undefined) {
    const text = yield* Effect.try({
      try: () => Fs.readFileSync(file, "utf8"),
      catch: (e) => new ConfigError({ message: `cannot read config file ${file}: ${String(e)}` })
    })
    const parsed = yield* Effect.try({
      try: () => (Path.extname(file) === ".json" ? JSON.parse(text) : Yaml.parse(text)) as unknown,
      catch: (e) => new ConfigError({ message: `config file ${file} is not valid ${Path.extname(file) === ".json" ? "JSON" : "YAML"}: ${String(e)}` })
    })
    // A relative data folder in a file is relative to the file, not to where it runs.
    if (isObject(parsed) && typeof parsed["dataDir"] === "string" && !Path.isAbsolute(parsed["dataDir"])) {
      parsed["dataDir"] = Path.resolve(Path.dirname(file), parsed["dataDir"])
    }
    raw = merge(raw, parsed)
    raw = merge(raw, { baseDir: Path.dirname(Path.resolve(file)) })
  }
  if (options.overrides !== undefined) raw = merge(raw, options.overrides)
  raw = applyEnv(raw, options.env ?? {})
  const unknown = StrictKeys.unknownKeys(Config, raw).map(StrictKeys.describe)
  const decoded = yield* Effect.result(decode(raw, { errors: "all" }))
  if (unknown.length > 0 || decoded._tag === "Failure") {
    const problems = [...unknown, ...(decoded._tag === "Failure" ? [decoded.failure.message] : [])]
    return yield* new ConfigError({ message: `invalid configuration${file === undefined ? "" : ` in ${file}`}:\n${problems.join("\n")}` })
  }
  return decoded.success
})
