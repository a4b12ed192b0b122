/**
 * A console's event stream (`GET /admin/stream` with a session cookie) lives no longer than its
 * session: it ends when the session expires idle, not only at sign-out (the sign-out case runs
 * against the server process in tooling/reliability/test/OperatorEdges.test.ts). The session
 * idle time is not a setting, so the admin routes are served here in-process, over real HTTP on
 * 127.0.0.1, with sessions that expire after 1.5 s.
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, Redacted } from "effect"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Config from "../src/boot/Config.ts"
import * as Admin from "../src/http/Admin.ts"
import * as Sessions from "../src/http/console/Sessions.ts"
import * as Server from "../src/http/Server.ts"
import { tempDir } from "./processes.ts"

const ADMIN_KEY = "stream-expiry-admin-key-0123456789"
const IDLE_MS = 1500

describe("the console's event stream", () => {
  it.live("ends when its session expires idle", () =>
    Effect.gen(function*() {
      const sessions = Sessions.make({ secure: false, ttlMs: IDLE_MS })
      const router = yield* Admin.routes({ adminKey: Redacted.make(ADMIN_KEY), ready: () => true, silenceAlertMs: 3_600_000, sessions })
      const handler = yield* NodeHttpServer.makeHandler(router.asHttpEffect(), { scope: yield* Effect.scope })
      const server = Http.createServer(handler)
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.sync(() => server.close())
      )
      const port = (server.address() as Net.AddressInfo).port
      const session = sessions.create(Date.now())

      const streamed = yield* Effect.promise(() =>
        new Promise<{ readonly events: number; readonly ended: boolean; readonly millis: number }>((resolve) => {
          const started = performance.now()
          let events = 0
          const req = Http.get({ host: "127.0.0.1", port, path: "/admin/stream", headers: { cookie: `${Sessions.cookieName(false)}=${session.id}` } }, (res) => {
            assert.strictEqual(res.statusCode, 200)
            res.on("data", (d: Buffer) => (events += d.toString().split("event: snapshot").length - 1))
            res.on("end", () => resolve({ events, ended: true, millis: performance.now() - started }))
          })
          req.on("error", () => resolve({ events, ended: false, millis: performance.now() - started }))
          // Bounded: a stream that outlives its session fails the test instead of hanging it.
          setTimeout(() => {
            req.destroy()
            resolve({ events, ended: false, millis: performance.now() - started })
          }, 10 * IDLE_MS).unref()
        })
      )
      assert.isAbove(streamed.events, 0, "the stream was live")
      assert.isTrue(streamed.ended, `the stream ended by itself (${streamed.events} snapshots in ${Math.round(streamed.millis)} ms)`)
      assert.isAtLeast(streamed.millis, IDLE_MS - 100, "not before the session expired")
      assert.isFalse(sessions.alive(session.id, Date.now()))
    }).pipe(
      Effect.provide(Effect.map(Config.load({ overrides: { dataDir: tempDir("ocs-stream-expiry-"), server: { adminKey: ADMIN_KEY } } }), Server.layer).pipe(Layer.unwrap)),
      Effect.scoped
    ), 60_000)
})
