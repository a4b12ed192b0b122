/**
 * Shared pieces of the reliability suite: the server and the simulator as real processes, a
 * keep-alive webhook sender with bounded concurrency, direct (read-only) looks into the
 * server's SQLite files, and the "live read models equal a full replay" check.
 */
import Database from "better-sqlite3"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { SqliteEventLog } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import { nodeFlags } from "@ocs/sync-server/nodeFlags"
import { type Proc, startListening, tempDir } from "@ocs/testkit/Processes"

export { eventually, parseLoose, type Proc, startSimulatorProcess, tempDir } from "@ocs/testkit/Processes"

/** The server's program, as its package publishes it (`ocs-sync-server`). */
const serverBin = fileURLToPath(import.meta.resolve("@ocs/sync-server/bin"))

export const ADMIN_KEY = "reliability-admin-key-0123456789"
export const ENCRYPTION_KEY = "5a".repeat(32)

export interface Tenant {
  readonly appId: string
  readonly businessId: string
  readonly accessToken: string
  readonly verifyToken: string
}

export interface ServerConfigOptions {
  readonly simUrl: string
  readonly dataDir: string
  readonly tenants: ReadonlyArray<Tenant>
  readonly resources?: ReadonlyArray<string>
  readonly windowSeconds?: number
  readonly extra?: Record<string, unknown>
}

/** A server configuration with everything on loopback and slow periodic work (tests drive it). */
export const serverConfig = (options: ServerConfigOptions) => ({
  server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
  dataDir: options.dataDir,
  api: { posBaseUrl: `${options.simUrl}/pos`, vpageBaseUrl: `${options.simUrl}/vpage`, timeoutMs: 5000 },
  rateLimits: {
    overrides: Object.fromEntries(
      ["product/list", "order/list", "bill/list", "customer/list", "product/inventory"].map((r) => [`/v3.0/${r}`, { requests: 150, windowSeconds: options.windowSeconds ?? 3 }])
    )
  },
  sync: { resources: options.resources ?? ["product"], intervalSeconds: 3600, reconcileSeconds: 3600, overlapSeconds: 5, pageSize: 100 },
  webhooks: { silenceAlertSeconds: 3600 },
  logLevel: "info",
  tenants: options.tenants.map((t) => ({
    appId: t.appId,
    verifyTokens: [t.verifyToken],
    businesses: [{ businessId: t.businessId, accessToken: t.accessToken }]
  })),
  ...options.extra
})

export interface ServerProcess {
  readonly proc: Proc
  readonly url: string
  readonly dataDir: string
}

/**
 * The server as `./ocs start` runs it, from a config file of its own; the same file starts it
 * again over the same data folder (restart after a crash).
 */
export class ServerHandle {
  readonly configFile: string
  readonly dataDir: string
  current: ServerProcess | undefined
  /** Everything every incarnation printed (stdout and stderr), for the token scan. */
  private readonly outputs: Array<Proc> = []

  constructor(config: Record<string, unknown>, dir: string = tempDir("ocs-rel-server-")) {
    this.configFile = Path.join(dir, "ocs.json")
    this.dataDir = String((config as { dataDir: string }).dataDir)
    Fs.writeFileSync(this.configFile, JSON.stringify(config, null, 2))
  }

  async start(): Promise<ServerProcess> {
    const { proc, url } = await startListening(
      [...nodeFlags, serverBin, "--config", this.configFile],
      { OCS_ENCRYPTION_KEY: ENCRYPTION_KEY },
      60_000
    )
    this.outputs.push(proc)
    this.current = { proc, url, dataDir: this.dataDir }
    return this.current
  }

  get url(): string {
    if (this.current === undefined) throw new Error("server not running")
    return this.current.url
  }

  /** SIGKILL: no shutdown code runs. */
  async kill(): Promise<void> {
    await this.current?.proc.stop("SIGKILL")
    this.current = undefined
  }

  /** SIGTERM (graceful); returns the exit code. */
  async stop(): Promise<number | null> {
    const code = await this.current?.proc.stop("SIGTERM")
    this.current = undefined
    return code ?? null
  }

  alive(): boolean {
    const c = this.current?.proc.child
    return c !== undefined && c.exitCode === null && c.signalCode === null
  }

  output(): string {
    return this.outputs.map((p) => p.output()).join("\n")
  }
}

// -- HTTP --------------------------------------------------------------------------------------

export const agent = (maxSockets = 32) => new Http.Agent({ keepAlive: true, maxSockets })

export interface Answer {
  readonly status: number
  readonly text: string
  readonly headers: Http.IncomingHttpHeaders
}

/** One HTTP request; `status` 0 when the connection failed (refused, reset, killed server). */
export const request = (
  url: string,
  init: {
    readonly method?: string
    readonly body?: string | Buffer
    readonly headers?: Record<string, string>
    readonly agent?: Http.Agent
    readonly timeoutMs?: number
    /** Sends from this local address (any of 127.0.0.0/8 on loopback: "many sources"). */
    readonly localAddress?: string
  } = {}
): Promise<Answer> =>
  new Promise((resolve) => {
    let settled = false
    const done = (a: Answer) => {
      if (!settled) {
        settled = true
        resolve(a)
      }
    }
    const body = init.body === undefined ? undefined : typeof init.body === "string" ? Buffer.from(init.body, "utf8") : init.body
    const req = Http.request(url, {
      method: init.method ?? (body === undefined ? "GET" : "POST"),
      agent: init.agent ?? false,
      ...(init.localAddress === undefined ? {} : { localAddress: init.localAddress }),
      headers: {
        ...(body === undefined ? {} : { "content-type": "application/json", "content-length": String(body.length) }),
        ...init.headers
      },
      timeout: init.timeoutMs ?? 30_000
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), headers: res.headers }))
      res.on("error", () => done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), headers: res.headers }))
    })
    req.on("timeout", () => req.destroy(new Error("timeout")))
    req.on("error", (e) => done({ status: 0, text: String(e), headers: {} }))
    if (body !== undefined) req.write(body)
    req.end()
  })

/** Adds an application and one tenant of it through the admin API (as an operator would). */
export const addTenant = async (base: string, t: Tenant) => {
  const app = await admin(base, "/admin/apps", { method: "POST", body: { appId: t.appId, verifyTokens: [t.verifyToken] } })
  const tenant = await admin(base, "/admin/tenants", { method: "POST", body: { appId: t.appId, businessId: t.businessId, accessToken: t.accessToken } })
  return { app, tenant }
}

export const admin = async (base: string, path: string, init: { readonly method?: string; readonly body?: unknown } = {}) => {
  const a = await request(`${base}${path}`, {
    method: init.method ?? "GET",
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    headers: { "x-admin-key": ADMIN_KEY }
  })
  let body: any
  try {
    body = parseIds(a.text)
  } catch {
    body = a.text
  }
  return { status: a.status, body }
}

/** JSON with integers beyond 2^53 kept as their digits (strings), via the reviver's source text. */
export const parseIds = (text: string): any =>
  JSON.parse(text, ((_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === "number" && Number.isInteger(value) && !Number.isSafeInteger(value) && context?.source !== undefined && /^-?\d+$/.test(context.source)
      ? context.source
      : value) as (this: any, key: string, value: any) => any)

/** Runs `task` over `items` with at most `concurrency` at once; `stop()` ends it early. */
export const pool = async <A>(items: ReadonlyArray<A>, concurrency: number, task: (item: A, index: number) => Promise<void>, stop: () => boolean = () => false) => {
  let next = 0
  const worker = async () => {
    while (next < items.length && !stop()) {
      const i = next++
      await task(items[i]!, i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
}

/** A webhook envelope as the service sends it (businessId as a JSON integer). */
export const envelope = (t: Tenant, event: string, data: Record<string, unknown>, token = t.verifyToken) =>
  `{"event":${JSON.stringify(event)},"businessId":${t.businessId},"webhooksVerifyToken":${JSON.stringify(token)},"data":${JSON.stringify(data)}}`

// -- SQLite, read only ---------------------------------------------------------------------------

export const files = (dataDir: string) => ({
  events: Path.join(dataDir, "events.sqlite"),
  outbox: Path.join(dataDir, "outbox.sqlite"),
  readModels: Path.join(dataDir, "read-models.sqlite"),
  tenants: Path.join(dataDir, "tenants.sqlite")
})

/** Opens an SQLite file read-only (safe beside the running server: WAL readers do not block). */
export const readOnly = <A>(filename: string, f: (db: Database.Database) => A): A => {
  const db = new Database(filename, { readonly: true, fileMustExist: true })
  try {
    db.pragma("busy_timeout = 5000")
    return f(db)
  } finally {
    db.close()
  }
}

/** Highest offset in the event log file. */
export const maxOffset = (dataDir: string): number =>
  readOnly(files(dataDir).events, (db) => (db.prepare("SELECT coalesce(max(offset), 0) AS m FROM records").get() as { m: number }).m)

/** How many webhook records the event log file holds. */
export const webhookRows = (dataDir: string): number =>
  readOnly(files(dataDir).events, (db) => (db.prepare("SELECT count(*) AS n FROM records WHERE source = 'webhook'").get() as { n: number }).n)

/** The read models' own checkpoint (offset), 0 when none. */
export const projectedOffset = (dataDir: string, consumer = "read-models"): number =>
  readOnly(files(dataDir).readModels, (db) => {
    const row = db.prepare("SELECT checkpoint FROM consumer_checkpoints WHERE consumer = ?").get(consumer) as { checkpoint: string } | undefined
    return row === undefined ? 0 : Number(row.checkpoint.replace(/^sqlite:/, ""))
  })

/**
 * Rebuilds the read models from the event log into a new file and compares its digest with
 * the live read-models file. The server must be stopped (both files are opened for writing).
 */
export const replayDigests = (dataDir: string, logFile = files(dataDir).events) => {
  const rebuilt = Path.join(tempDir("ocs-rel-rebuild-"), "rebuilt.sqlite")
  const digestOf = (filename: string) =>
    Effect.gen(function*() {
      const rm = yield* ReadModels.ReadModels
      return yield* rm.digest("all")
    }).pipe(Effect.provide(ReadModels.ReadModels.layer({ filename })))
  const program = Effect.gen(function*() {
    const stats = yield* ReadModels.rebuild({ filename: rebuilt })
    const live = yield* digestOf(files(dataDir).readModels)
    const replay = yield* digestOf(rebuilt)
    return { live, replay, records: stats.records }
  })
  return Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(Layer.fresh(SqliteEventLog.layer({ filename: logFile })))))
}

/** Every file of a folder (recursively), for byte scans. */
export const allFiles = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = Path.join(dir, e.name)
    return e.isDirectory() ? allFiles(p) : e.isFile() ? [p] : []
  })
