import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeCrypto from "node:crypto"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"
import { DryRun, PluginLoader, PluginRuntime } from "@ocs/plugin-runtime"
import { append, files, runtimeLayer, testServer, webhookRecord } from "./helpers.ts"

const here = NodePath.dirname(NodeUrl.fileURLToPath(import.meta.url))
const SECRET = "dry-run-shared-secret"
const hmac = (body: string) => `sha256=${NodeCrypto.createHmac("sha256", SECRET).update(body).digest("hex")}`

describe("DryRun", () => {
  it.live("captures a plugin's HTTP instead of sending it; the real runtime sends the signed request", () => {
    const f = files()
    return Effect.gen(function*() {
      // The shipped order-forwarder, loaded by path.
      const forwarder = yield* PluginLoader.load("../../../plugins/order-forwarder/src/index.ts", { baseDir: here })
      const server = yield* testServer()
      const config = { url: server.url, secret: SECRET }
      const offsets = yield* Effect.scoped(Effect.gen(function*() {
        return yield* append([
          webhookRecord("orderAdd", { info: { id: 1, status: 54 }, channel: { appOrderId: "A-1" } }),
          webhookRecord("productAdd", { id: 2 }),
          webhookRecord("orderUpdate", { info: { id: 1, status: 60 } }, { businessId: "43" }),
          webhookRecord("orderAdd", { info: { id: 3 } })
        ])
      }).pipe(Effect.provide(runtimeLayer(f, { plugins: [] }))))

      // Dry run: one tenant, up to an offset. Nothing reaches the server. The records were never
      // projected (no read models relayed their changes), so every event of every record is
      // replayed, as the runtime below is set up to deliver them.
      const report = yield* DryRun.dryRun(forwarder, { config, tenant: "1001:42", untilOffset: offsets[2]!, changeStream: false }).pipe(
        Effect.provide(runtimeLayer(f, { plugins: [] }))
      )
      assert.strictEqual(server.received.length, 0)
      assert.strictEqual(report.records, 2)
      assert.deepStrictEqual(report.totals, { events: 1, handled: 1, failed: 0, httpRequests: 1, apiCalls: 0, kvWrites: 0 })
      const [request] = report.events[0]!.effects.filter((e) => e._tag === "HttpRequest")
      assert.strictEqual(request!._tag === "HttpRequest" && request!.url, server.url)
      if (request!._tag === "HttpRequest") assert.strictEqual(request!.headers["x-ocs-signature"], hmac(request!.body!))
      assert.strictEqual(report.events[0]!.offset, offsets[0])

      // All tenants, whole log.
      const all = yield* DryRun.dryRun(forwarder, { config, changeStream: false }).pipe(Effect.provide(runtimeLayer(f, { plugins: [] })))
      assert.strictEqual(all.totals.httpRequests, 3)
      assert.strictEqual(server.received.length, 0)

      // The real run sends the same, signed over the exact body.
      yield* Effect.scoped(Effect.gen(function*() {
        const rt = yield* PluginRuntime.PluginRuntime
        yield* rt.awaitOffset(offsets[3]!)
      }).pipe(Effect.provide(runtimeLayer(f, { plugins: [{ plugin: forwarder, config }] }))))
      assert.strictEqual(server.received.length, 3)
      for (const r of server.received) {
        assert.strictEqual(r.method, "POST")
        assert.strictEqual(r.headers["x-ocs-signature"], hmac(r.body))
        assert.strictEqual(r.headers["idempotency-key"], (JSON.parse(r.body) as { id: string }).id)
      }
    }).pipe(Effect.scoped)
  })
})
