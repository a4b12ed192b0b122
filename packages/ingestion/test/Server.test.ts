import { assert, describe, it } from "@effect/vitest"
import { DirectAppend, EventLog, SqliteEventLog } from "@ocs/event-log"
import { Ingestion, WebhookApps } from "@ocs/ingestion"
import { Effect, Layer, Stream } from "effect"
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { envelope, listen, redacted, request, tempDir } from "./helpers.ts"

const APP = "100001"

/** Ingestion over a fresh SQLite log file, with one app. */
const base = () => {
  const filename = NodePath.join(tempDir(), "events.db")
  return Ingestion.Ingestion.layer().pipe(
    Layer.provideMerge(WebhookApps.WebhookApps.layerMemory([{ appId: APP, verifyTokens: ["secret-token"], enabled: true }])),
    Layer.provideMerge(SqliteEventLog.layer({ filename }))
  )
}

const stored = Effect.gen(function*() {
  const log = yield* EventLog.EventLog
  return yield* Stream.runCollect(log.read({ tenant: "all" }))
})

/** A self-signed certificate for 127.0.0.1, made with the machine's openssl. */
const selfSigned = () => {
  const dir = tempDir("ingestion-tls-")
  const certFile = NodePath.join(dir, "cert.pem")
  const keyFile = NodePath.join(dir, "key.pem")
  ChildProcess.execFileSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", keyFile, "-out", certFile
  ], { stdio: "ignore" })
  return { certFile, keyFile }
}

describe("mounting the listener", () => {
  it.live("in a node:https server with a certificate and key file; plain HTTP to it gets no answer", () =>
    Effect.gen(function*() {
      const tls = selfSigned()
      const ingestion = yield* Ingestion.Ingestion
      const ca = NodeFs.readFileSync(tls.certFile)
      const server = yield* listen(ingestion.nodeListener, { cert: ca, key: NodeFs.readFileSync(tls.keyFile) })
      assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/)
      const reply = yield* Effect.promise(() => request(`${server.url}/webhooks/${APP}`, envelope({}), { ca }))
      assert.strictEqual(reply.status, 200)
      // An unverified certificate is refused by the client: the test really talks TLS.
      const untrusted = yield* Effect.promise(() =>
        request(`${server.url}/webhooks/${APP}`, envelope({}), {}).then(() => "answered", (e: Error) => e.message)
      )
      assert.match(untrusted, /self[- ]signed|certificate/i)
      const plain = yield* Effect.promise(() =>
        request(`http://127.0.0.1:${server.port}/webhooks/${APP}`, envelope({})).then((r) => String(r.status), (e: Error) => e.message)
      )
      assert.notStrictEqual(plain, "200")
      const records = yield* stored
      assert.strictEqual(records.length, 1)
      assert.strictEqual(records[0]!.body, redacted(envelope({})))
    }).pipe(Effect.scoped, Effect.provide(base())))

  it.live("in a plain node:http server next to other routes: exact paths, every answer, no trailing-slash forgiveness", () =>
    Effect.gen(function*() {
      const ingestion = yield* Ingestion.Ingestion
      const { url } = yield* listen((req, res) => {
        if (ingestion.isWebhookPath(req.url ?? "/")) return ingestion.nodeListener(req, res)
        res.writeHead(200).end("sync server")
      })
      const ask = (path: string, body: string | undefined, method = "POST", headers = {}) =>
        Effect.promise(() => request(`${url}${path}`, body, { method, headers }))
      const ok = yield* ask(`/webhooks/${APP}`, envelope({}), "POST", { "user-agent": "sender" })
      assert.strictEqual(ok.status, 200)
      assert.strictEqual(ok.body, `{"ok":true}`)
      assert.strictEqual((yield* ask(`/webhooks/${APP}`, envelope({}))).body, `{"ok":true,"duplicate":true}`)
      assert.strictEqual((yield* ask(`/webhooks/${APP}/`, envelope({ n: 1 }))).status, 404)
      assert.strictEqual((yield* ask(`/webhooks`, envelope({ n: 1 }))).status, 404)
      const get = yield* ask(`/webhooks/${APP}`, undefined, "GET")
      assert.strictEqual(get.status, 405)
      assert.strictEqual(get.headers.allow, "POST")
      assert.strictEqual((yield* ask(`/webhooks/${APP}`, envelope({ n: 2 }, "wrong"))).status, 401)
      assert.strictEqual((yield* ask(`/webhooks/${APP}`, "{")).status, 400)
      assert.strictEqual((yield* ask(`/webhooks/${APP}`, envelope({ pad: "x".repeat(1024 * 1024) }))).status, 413)
      assert.strictEqual((yield* ask(`/status`, undefined, "GET")).body, "sync server")
      const records = yield* stored
      assert.strictEqual(records.length, 1)
      assert.deepStrictEqual(records[0]!.meta, { remoteAddress: "127.0.0.1", userAgent: "sender", contentLength: envelope({}).length, tokenSource: "body" })
      const metrics = yield* ingestion.metrics
      assert.deepStrictEqual([metrics.accepted, metrics.duplicates, metrics.rejected.not_found, metrics.rejected.too_large], [1, 1, 2, 1])
    }).pipe(Effect.scoped, Effect.provide(base())))

  it.live("over a log without direct appends of its own: DirectAppend.layerFromEventLog", () =>
    Effect.gen(function*() {
      const ingestion = yield* Ingestion.Ingestion
      const { url } = yield* listen(ingestion.nodeListener)
      assert.strictEqual((yield* Effect.promise(() => request(`${url}/webhooks/${APP}`, envelope({})))).body, `{"ok":true}`)
      assert.strictEqual((yield* Effect.promise(() => request(`${url}/webhooks/${APP}`, envelope({})))).body, `{"ok":true,"duplicate":true}`)
      assert.strictEqual((yield* stored).length, 1)
    }).pipe(Effect.scoped, Effect.provide(Ingestion.Ingestion.layer().pipe(
      Layer.provideMerge(WebhookApps.WebhookApps.layerMemory([{ appId: APP, verifyTokens: ["secret-token"], enabled: true }])),
      Layer.provideMerge(DirectAppend.DirectAppend.layerFromEventLog),
      // Only the EventLog of the SQLite layer: the receiver's appends go through its effect.
      Layer.provideMerge(Layer.effect(EventLog.EventLog, Effect.gen(function*() {
        return yield* EventLog.EventLog
      })).pipe(
        Layer.provide(SqliteEventLog.layer({ filename: NodePath.join(tempDir(), "events.db") }))
      ))
    ))))
})
