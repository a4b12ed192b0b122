import { EventLog, type LogRecord, SqliteEventLog } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import type * as NodeNet from "node:net"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { PluginRuntime } from "@ocs/plugin-runtime"

export { webhookRecord } from "@ocs/plugin-sdk/testing"

export interface Files {
  readonly dir: string
  readonly log: string
  readonly rm: string
  readonly plugins: string
}

export const files = (): Files => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "plugin-sdk-"))
  return { dir, log: NodePath.join(dir, "events.sqlite"), rm: NodePath.join(dir, "read-models.sqlite"), plugins: NodePath.join(dir, "plugins.sqlite") }
}

export const baseLayer = (f: Files) =>
  Layer.mergeAll(
    SqliteEventLog.layer({ filename: f.log, synchronous: "NORMAL", pollIntervalMillis: 50 }),
    ReadModels.ReadModels.layer({ filename: f.rm })
  )

/** The runtime over the files, with the log and read models it reads. */
export const runtimeLayer = (f: Files, options: Omit<PluginRuntime.Options, "filename">) =>
  Layer.provideMerge(PluginRuntime.PluginRuntime.layer({ filename: f.plugins, ...options }), baseLayer(f))

export const append = (records: ReadonlyArray<LogRecord.NewRecord>) =>
  Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    const results = yield* log.append(records)
    return results.map((r) => r.offset)
  })

export interface Received {
  readonly method: string
  readonly url: string
  readonly headers: NodeHttp.IncomingHttpHeaders
  readonly body: string
}

/** A real HTTP server on 127.0.0.1 that records requests; `answer` picks the status. */
export const testServer = (answer: (request: Received, index: number) => number = () => 200) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly url: string; readonly received: Array<Received> }>((resume) => {
      const received: Array<Received> = []
      const server = NodeHttp.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const r = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") }
          received.push(r)
          res.statusCode = answer(r, received.length - 1)
          res.end("{}")
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as NodeNet.AddressInfo).port
        resume(Effect.succeed(Object.assign({ url: `http://127.0.0.1:${port}/hook`, received }, { server })))
      })
    }),
    (s) => Effect.callback<void>((resume) => { (s as unknown as { server: NodeHttp.Server }).server.close(() => resume(Effect.void)); (s as unknown as { server: NodeHttp.Server }).server.closeAllConnections() })
  )
