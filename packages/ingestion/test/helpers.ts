import { DirectAppend, EventLog, type LogRecord, SqliteEventLog } from "@ocs/event-log"
import { SqliteDatabase } from "@ocs/sqlite"
import { Ingestion, WebhookApps } from "@ocs/ingestion"
import { Context, Effect, Layer, type Scope, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as Http from "node:http"
import * as Https from "node:https"
import * as Net from "node:net"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

export const tempDir = (prefix = "ingestion-"): string => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), prefix))

let nextApp = 7_000_000_000_000_000_000n
/** A fresh appId per test, so tests sharing one log file do not see each other's records. */
export const freshAppId = (): string => (nextApp++).toString()

export interface Reply {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: string
}

export interface PostOptions {
  readonly method?: string
  readonly headers?: Http.OutgoingHttpHeaders
  readonly agent?: Http.Agent
  readonly ca?: string | Buffer
}

/** One request over real HTTP(S); resolves with the whole answer. */
export const request = (url: string, body: string | Uint8Array | undefined, options: PostOptions = {}): Promise<Reply> =>
  new Promise((resolve, reject) => {
    const target = new URL(url)
    const lib = target.protocol === "https:" ? Https : Http
    const req = lib.request(
      target,
      {
        method: options.method ?? "POST",
        headers: { "content-type": "application/json", ...options.headers },
        ...(options.agent === undefined ? {} : { agent: options.agent }),
        ...(options.ca === undefined ? {} : { ca: options.ca })
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }))
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    req.end(body)
  })

export const post = (url: string, body: string | Uint8Array, options: PostOptions = {}) =>
  Effect.promise(() => request(url, body, options))

/**
 * Runs a request listener on its own `node:http` (or, with `tls`, `node:https`) server on
 * 127.0.0.1 and a free port, as a user mounts the receiver, for the lifetime of the scope.
 */
export const listen = (
  listener: Http.RequestListener,
  tls?: { readonly cert: string | Buffer; readonly key: string | Buffer }
): Effect.Effect<{ readonly url: string; readonly port: number }, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<Http.Server | Https.Server>((resume) => {
      const server = tls === undefined ? Http.createServer(listener) : Https.createServer(tls, listener)
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
  ).pipe(Effect.map((server) => {
    const port = (server.address() as Net.AddressInfo).port
    return { url: `${tls === undefined ? "http" : "https"}://127.0.0.1:${port}`, port }
  }))

/** The running receiver of a test file and the parts around it. */
export class TestReceiver extends Context.Service<TestReceiver, {
  readonly url: string
  readonly filename: string
  readonly apps: WebhookApps.MemoryApps
}>()("test/TestReceiver") {}

/**
 * The whole receiver over a real SQLite event log file in a temp dir, its listener taking every
 * request of a `node:http` server on 127.0.0.1 with a free port. `wrapLog` lets a test put a
 * failing or slow log in front of the real one (the receiver's direct appends then run the
 * wrapper's `append`).
 */
export const receiverLayer = (
  options: Ingestion.Options = {},
  extra: {
    readonly dedupeWindowMillis?: number
    readonly wrapLog?: (log: EventLog.EventLogService) => EventLog.EventLogService
  } = {}
) => {
  const filename = NodePath.join(tempDir(), "events.db")
  const apps = WebhookApps.makeMemory()
  const realLog = SqliteEventLog.layer({
    filename,
    ...(extra.dedupeWindowMillis === undefined ? {} : { dedupeWindowMillis: extra.dedupeWindowMillis })
  })
  const wrap = extra.wrapLog
  const log = wrap === undefined
    ? realLog
    : Layer.effectContext(Effect.map(EventLog.EventLog, (real) => {
      const wrapped = wrap(real)
      return Context.make(EventLog.EventLog, wrapped).pipe(Context.add(DirectAppend.DirectAppend, DirectAppend.fromAppend(wrapped.append)))
    })).pipe(Layer.provide(realLog))
  const ingestion = Ingestion.Ingestion.layer(options).pipe(
    Layer.provide(Layer.succeed(WebhookApps.WebhookApps, apps))
  )
  const server = Layer.effect(
    TestReceiver,
    Effect.gen(function*() {
      const receiver = yield* Ingestion.Ingestion
      const { url } = yield* listen(receiver.nodeListener)
      return TestReceiver.of({ url, filename, apps })
    })
  )
  return server.pipe(Layer.provideMerge(ingestion), Layer.provideMerge(log))
}

/** The log with `append` replaced. */
export const wrapAppend = (
  log: EventLog.EventLogService,
  append: EventLog.EventLogService["append"]
): EventLog.EventLogService => ({ ...log, append })

/** Registers a fresh enabled application with the given tokens; returns its appId. */
export const addApp = (tokens: ReadonlyArray<string> = ["secret-token"]) =>
  Effect.map(TestReceiver, (r) => {
    const appId = freshAppId()
    r.apps.set({ appId, verifyTokens: tokens, enabled: true })
    return appId
  })

/** Every record of one application, in log order (read back from the SQLite file). */
export const recordsOf = (appId: string) =>
  Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    const all = yield* Stream.runCollect(log.read({ tenant: "all" }))
    return all.filter((r: LogRecord.LogRecord) => r.appId === appId)
  })

/** The dedupe decisions the log recorded for one application (audit table). */
export const decisionsOf = (appId: string) =>
  Effect.gen(function*() {
    const { filename } = yield* TestReceiver
    return yield* Effect.scoped(
      Effect.flatMap(SqliteDatabase.make({ filename }), (db) =>
        db.use("decisions", (_, c) =>
          c.prepare(`SELECT tenant, reason, dedupe_key AS dedupeKey, original_offset AS original FROM dedupe_decisions WHERE tenant LIKE ? ORDER BY seq`)
            .all(`${appId}:%`) as Array<{ tenant: string; reason: string; dedupeKey: string; original: number }>)
      )
    )
  })

export const hook = (appId: string, path = `/webhooks/${appId}`) => Effect.map(TestReceiver, (r) => `${r.url}${path}`)

/** A body as the receiver stores it: the top-level token's value replaced, every other byte kept. */
export const redacted = (body: string, token = "secret-token"): string => {
  const field = `"webhooksVerifyToken":${JSON.stringify(token)}`
  if (!body.includes(field)) throw new Error("redacted: the body does not carry the token field in that spelling")
  return body.replace(field, `"webhooksVerifyToken":"[redacted]"`)
}

export const envelope = (fields: Record<string, unknown>, token = "secret-token"): string =>
  JSON.stringify({ event: "orderAdd", businessId: 42, webhooksVerifyToken: token, data: { id: 1 }, ...fields })

/**
 * Sends a request head declaring `declared` body bytes and only `sent` of them, then waits
 * for the answer and the close: what a receiver answers before reading the rest.
 */
export const partialPost = (url: string, declared: number, sent: string) =>
  Effect.promise(() =>
    new Promise<{ status: number; retryAfter: string | undefined; connection: string | undefined }>((resolve, reject) => {
      const target = new URL(url)
      const socket = Net.connect(Number(target.port), target.hostname, () => {
        socket.write(`POST ${target.pathname} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n${sent}`)
      })
      let text = ""
      socket.on("data", (d) => (text += d.toString()))
      socket.on("error", reject)
      socket.on("close", () =>
        resolve({
          status: Number(text.split(" ")[1]),
          retryAfter: /\r\nretry-after: (\S+)/i.exec(text)?.[1],
          connection: /\r\nconnection: (\S+)/i.exec(text)?.[1]
        }))
    })
  )
