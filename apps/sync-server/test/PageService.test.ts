import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as Path from "node:path"
import { Operation } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import { SyncStateStore } from "@ocs/sync/SyncState"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { ConfigFile } from "@ocs/config"
import * as Config from "../src/boot/Config.ts"
import * as Server from "../src/http/Server.ts"
import { engineLayer } from "./engineLayer.ts"
import { adminClient, eventually, tempDir } from "./processes.ts"

// A tenant's page service (docs/api-catalogue.md §9) synced end to end from the simulator
// (strict mode, as every engine suite): the pages its grant names and no other; pages, users,
// tags, and per page its conversations (each with its messages) and customers, a resource per
// page; an incremental pass reads conversations newest first down to its bound, with the
// messages of the ones changed; a page whose access expires mid-run pauses that page's
// resources alone, with the reason kept; the read models rebuilt from the log give the same
// digest.

let sim: RunningSimulator
beforeAll(async () => {
  sim = await startSimulator({ port: 0, demo: false })
})
afterAll(async () => {
  await sim.close()
})

/** The simulator's business has three pages; the grant names two. */
const GRANTED = ["1000000001", "1000000002"]
const NOT_GRANTED = "1000000003"
/**
 * Per page: 20 conversations, each with 20 to 80 messages (one or two calls at 50): about 60
 * message calls in all, inside one rate-limit window of the URL (150 a 30 s).
 */
const PER_PAGE = 20

describe("the page service", () => {
  it.live("a tenant's granted pages synced end to end; new messages found in a few calls; an expired page pauses alone; a rebuild gives the same digest", () => {
    const dir = tempDir("ocs-vpage-")
    const layer = Layer.merge(
      // No server resources: the tenant's reads are its page-service reads alone.
      engineLayer(dir, sim, { operations: [], intervalMs: 60_000, reconcileMs: 3_600_000, overlapMs: 0, horizonMs: 62 * 24 * 3600 * 1000 }),
      ReadModels.ReadModels.layer({ filename: Path.join(dir, "read-models.sqlite") })
    )
    return Effect.gen(function*() {
      const store = yield* TenantRegistry
      const sync = yield* SyncEngine
      const rm = yield* ReadModels.ReadModels
      const states = yield* SyncStateStore
      const t = yield* Effect.promise(() => sim.control.createTenant({ products: 5, orders: 0, bills: 0, customers: 0, conversationsPerPage: PER_PAGE }))
      yield* store.upsertApp(t.app.appId, ["vt"])
      yield* store.upsertBusiness({ appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken, pages: GRANTED })
      const b = Option.getOrThrow(yield* store.business(t.app.appId, t.business.businessId))
      const tenant = { appId: b.appId, businessId: b.businessId }
      const reads = yield* sync.operationsOf(b)
      const conversationsOf = (page: string) => reads.find((op) => op.operation === "list" && Operation.resourceKey(op).endsWith(`{"pageIds":["${page}"]}`))!

      const conversations = Effect.map(rm.vpageConversations(tenant, { limit: 1000 }), (p) => p.items)
      const messageCount = Effect.flatMap(conversations, (cs) =>
        Effect.map(Effect.forEach(cs, (c) => Effect.map(rm.vpageMessages(tenant, c.id, { limit: 1000 }), (p) => p.items.length)), (ns) => ns.reduce((a, n) => a + n, 0)))

      // The first sync: every read of the granted pages, done.
      const first = yield* sync.syncTenant(b.appId, b.businessId)
      assert.deepStrictEqual(first.map((r) => r.outcome), reads.map(() => "done"))
      yield* rm.catchUp()
      assert.deepStrictEqual((yield* rm.vpagePages(tenant)).map((p) => p.id), GRANTED, "the granted pages, not the third")
      assert.strictEqual((yield* rm.vpageUsers(tenant)).length, 8)
      assert.strictEqual((yield* rm.vpageTags(tenant)).length, 6)
      const all = yield* conversations
      assert.strictEqual(all.length, GRANTED.length * PER_PAGE)
      assert.isFalse(all.some((c) => c.pageId === NOT_GRANTED), "never a page outside the grant")
      assert.isTrue(all.every((c) => c.lastMessage !== null && (c.status === "1" || c.status === "2")))
      const customers = (yield* rm.vpageCustomers(tenant, { limit: 1000 })).items
      assert.strictEqual(customers.length, GRANTED.length * PER_PAGE)
      assert.isTrue(customers.some((c) => Array.isArray(c.phones) && c.phones.length === 1))
      const messages = yield* messageCount
      assert.isAtLeast(messages, GRANTED.length * PER_PAGE * 20)
      const ordered = (yield* rm.vpageMessages(tenant, all[0]!.id, { limit: 1000 })).items
      for (let i = 1; i < ordered.length; i++) assert.isAtLeast(ordered[i]!.createdAtMs!, ordered[i - 1]!.createdAtMs!, "messages in the order written")

      // Two customers write on the first page: the incremental pass reads the newest
      // conversations and those two conversations' newest messages, a few calls.
      const changed = ["5000000003", "5000000015"]
      for (const id of changed) yield* Effect.promise(() => sim.control.sendPageMessage(b.businessId, id))
      const incremental = yield* sync.runOnce(b, conversationsOf(GRANTED[0]!), { gapFill: true })
      assert.strictEqual(incremental.mode, "incremental")
      assert.isAtMost(incremental.pages, 3, "one page of conversations, one page of messages for each changed one")
      yield* rm.catchUp()
      assert.strictEqual(yield* messageCount, messages + 2, "the two new messages, nothing lost")
      const top = (yield* rm.vpageConversations(tenant, { pageId: GRANTED[0]!, limit: 2 })).items
      assert.sameMembers(top.map((c) => c.id), changed, "the conversations written to lead their page, unread")
      assert.isTrue(top.every((c) => c.status === "1"))

      // The second page's access expires mid-run; the next pass of every resource runs.
      yield* Effect.promise(() => sim.control.expirePage(b.businessId, GRANTED[1]!))
      const round = yield* sync.syncTenant(b.appId, b.businessId, { gapFill: true })
      const paused = round.flatMap((r, i) => (r.outcome === "paused" ? [Operation.resourceKey(reads[i]!)] : []))
      assert.deepStrictEqual(paused, [Operation.resourceKey(conversationsOf(GRANTED[1]!))], "the expired page's conversations only")
      assert.isTrue(round.every((r) => r.outcome === "done" || r.outcome === "paused"), JSON.stringify(round))
      const second = conversationsOf(GRANTED[1]!)
      assert.strictEqual((yield* states.state(b.appId, b.businessId, Operation.resourceKey(second))).paused?.code, "ERR_PAGE_EXPIRED", "the reason is kept")
      // Paused, it is not pulled again; the first page is.
      assert.strictEqual((yield* sync.runOnce(b, second, { forceFull: true })).mode, "skipped")
      assert.strictEqual((yield* sync.runOnce(b, conversationsOf(GRANTED[0]!), { gapFill: true })).outcome, "done")
      // Page customers have no time to read by: their full pass (the reconciliation) meets the expiry.
      const customerReads = reads.filter((op) => op.resource === "customer")
      assert.deepStrictEqual(yield* Effect.forEach(customerReads, (op) => Effect.map(sync.runOnce(b, op, { forceFull: true }), (r) => r.outcome)), ["done", "paused"])
      yield* rm.catchUp()
      assert.strictEqual((yield* conversations).length, GRANTED.length * PER_PAGE, "what the copy held of the expired page stays")

      // The read models rebuilt from the log: the same digest, in whole and for the tenant.
      const live = yield* rm.digest()
      const rebuilt = Path.join(dir, "rebuilt.sqlite")
      yield* rm.rebuild({ filename: rebuilt })
      const again = yield* Effect.scoped(Effect.flatMap(ReadModels.make({ filename: rebuilt }), (r) => Effect.all([r.digest(), r.digest(tenant), r.vpageConversations(tenant, { limit: 1000 })])))
      assert.deepStrictEqual(again[0], live)
      assert.deepStrictEqual(again[1], yield* rm.digest(tenant))
      assert.strictEqual(again[2].items.length, GRANTED.length * PER_PAGE)
    }).pipe(Effect.provide(layer))
  }, 60_000)

  it.live("the server reads the tenant's configured pages and serves them on the admin read routes", () =>
    Effect.gen(function*() {
      const t = yield* Effect.promise(() => sim.control.createTenant({ products: 3, orders: 0, bills: 0, customers: 0, conversationsPerPage: 5 }))
      const dataDir = tempDir("ocs-vpage-server-")
      const adminKey = "vpage-admin-key-0123456789"
      const page = GRANTED[1]!
      const config = yield* Config.load({
        overrides: ConfigFile.merge({}, {
          dataDir,
          server: { host: "127.0.0.1", port: 0, adminKey },
          api: { posBaseUrl: sim.posBaseUrl, vpageBaseUrl: sim.vpageBaseUrl },
          sync: { resources: ["depot"], intervalSeconds: 3600, reconcileSeconds: 3600 },
          logLevel: "error",
          tenants: [{
            appId: t.app.appId,
            verifyTokens: ["vt"],
            // The grant names no page (a pasted token): the configured page is read, no other.
            businesses: [{ businessId: t.business.businessId, accessToken: t.token.accessToken, settings: { pages: [page] } }]
          }]
        })
      })
      return yield* Effect.gen(function*() {
        const running = yield* Server.start(config)
        const admin = adminClient(() => running.url, adminKey)
        const base = `/admin/tenants/${t.app.appId}/${t.business.businessId}/vpage`
        const conversations = yield* Effect.promise(() =>
          eventually("the configured page's conversations", async () => {
            const r = await admin(`${base}/conversations?limit=100`)
            return r.status === 200 && r.body.items.length === 5 ? r.body.items : undefined
          }, 20_000, 100))
        assert.isTrue(conversations.every((c: any) => c.pageId === page))
        const pages = yield* Effect.promise(() => admin(`${base}/pages`))
        assert.deepStrictEqual(pages.body.items.map((p: any) => p.id), [page])
        // The messages are read after their conversations' page: wait for them too.
        const messages = yield* Effect.promise(() =>
          eventually("the first conversation's messages", async () => {
            const r = await admin(`${base}/conversations/${conversations[0].id}/messages?limit=10`)
            return r.body.items.length === 10 ? r : undefined
          }, 20_000, 100))
        assert.strictEqual(messages.body.items.length, 10)
        assert.isString(messages.body.next)
        assert.strictEqual((yield* Effect.promise(() => admin(`${base}/conversations/${conversations[0].id}`))).body.id, conversations[0].id)
        assert.strictEqual((yield* Effect.promise(() => admin(`${base}/conversations/nope`))).status, 404)
        assert.strictEqual((yield* Effect.promise(() => admin(`${base}/conversations?pageId=x`))).status, 400)
        // Customers are the page's last read.
        const customers = yield* Effect.promise(() =>
          eventually("the page's customers", async () => {
            const r = await admin(`${base}/customers?pageId=${page}`)
            return r.body.items.length === 5 ? r : undefined
          }, 20_000, 100))
        assert.strictEqual(customers.body.items.length, 5)
        assert.isTrue(customers.body.items.every((c: any) => Array.isArray(c.phones) && Array.isArray(c.emails)))
        assert.strictEqual((yield* Effect.promise(() => admin(`${base}/users`))).body.items.length, 8)
        assert.strictEqual((yield* Effect.promise(() => admin(`${base}/tags`))).body.items.length, 6)
      }).pipe(Effect.scoped, Effect.provide(Server.layer(config)))
    }), 60_000)
})
