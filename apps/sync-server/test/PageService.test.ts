import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as Path from "node:path"
import { Operation } from "@ocs/protocol"
import { ReadModels } from "@ocs/read-models"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { SyncEngine } from "@ocs/sync/SyncEngine"
import { SyncStateStore } from "@ocs/sync/SyncState"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import { engineLayer } from "./engineLayer.ts"
import { tempDir } from "./processes.ts"

// The page service (docs/api-catalogue.md §9) pulled by the engine: pages, users, tags, and per
// page its conversations (each with its messages) and its customers, a resource per page; an
// incremental pass reads conversations newest first down to its bound with the messages of the
// ones changed; a page whose access expires mid-run pauses that page's resources alone, with
// the reason kept.

let sim: RunningSimulator
beforeAll(async () => {
  sim = await startSimulator({ port: 0, demo: false })
})
afterAll(async () => {
  await sim.close()
})

const PAGE_IDS = ["1000000001", "1000000002", "1000000003"]
/**
 * Per page: 20 conversations, each with 20 to 80 messages (one or two calls at 50): about 90
 * message calls in all, inside one rate-limit window of the URL (150 a 30 s).
 */
const PER_PAGE = 20
const reads = Operation.pageServiceReads(PAGE_IDS)
const conversationsOf = (page: string) => reads.find((op) => op.resource === "conversation" && op.operation === "list" && Operation.resourceKey(op).includes(`"${page}"`))!

const testLayer = () => {
  const dir = tempDir("ocs-vpage-")
  return Layer.merge(
    engineLayer(dir, sim, { operations: reads, intervalMs: 60_000, reconcileMs: 3_600_000, overlapMs: 0, horizonMs: 62 * 24 * 3600 * 1000, pageSize: 50 }),
    ReadModels.ReadModels.layer({ filename: Path.join(dir, "read-models.sqlite") })
  )
}

describe("the page service", () => {
  it.live("pulls every Vpage read; incremental passes find new messages in a few calls; an expired page pauses only its own resources", () =>
    Effect.gen(function*() {
      const store = yield* TenantRegistry
      const sync = yield* SyncEngine
      const rm = yield* ReadModels.ReadModels
      const states = yield* SyncStateStore
      const t = yield* Effect.promise(() => sim.control.createTenant({ products: 5, orders: 0, bills: 0, customers: 0, conversationsPerPage: PER_PAGE }))
      yield* store.upsertApp(t.app.appId, ["vt"])
      yield* store.upsertBusiness({ appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken })
      const b = Option.getOrThrow(yield* store.business(t.app.appId, t.business.businessId))
      const tenant = { appId: b.appId, businessId: b.businessId }
      const conversationIds = Effect.map(rm.vpageConversations(tenant, { limit: 1000 }), (p) => p.items.map((c) => c.id))
      const count = (kind: string): Effect.Effect<number, unknown> => {
        switch (kind) {
          case "page": return Effect.map(rm.vpagePages(tenant), (r) => r.length)
          case "pageUser": return Effect.map(rm.vpageUsers(tenant), (r) => r.length)
          case "conversationTag": return Effect.map(rm.vpageTags(tenant), (r) => r.length)
          case "conversation": return Effect.map(conversationIds, (r) => r.length)
          case "pageCustomer": return Effect.map(rm.vpageCustomers(tenant, { limit: 1000 }), (r) => r.items.length)
          default:
            return Effect.flatMap(conversationIds, (ids) =>
              Effect.map(Effect.forEach(ids, (id) => Effect.map(rm.vpageMessages(tenant, id, { limit: 1000 }), (p) => p.items.length)), (ns) => ns.reduce((a, b) => a + b, 0)))
        }
      }

      for (const op of reads) assert.strictEqual((yield* sync.runOnce(b, op)).outcome, "done", Operation.resourceKey(op))
      yield* rm.catchUp()
      assert.strictEqual(yield* count("page"), 3)
      assert.strictEqual(yield* count("pageUser"), 8)
      assert.strictEqual(yield* count("conversationTag"), 6)
      assert.strictEqual(yield* count("conversation"), 3 * PER_PAGE, "every conversation of each page, 50 a call")
      assert.strictEqual(yield* count("pageCustomer"), 3 * PER_PAGE)
      const messages = yield* count("message")
      assert.isAtLeast(messages, 3 * PER_PAGE * 20)

      // Two customers write on page 1: an incremental pass reads the newest conversations and
      // those two conversations' newest messages, a few calls.
      const first = conversationsOf(PAGE_IDS[0]!)
      const changed = ["5000000003", "5000000015"]
      for (const id of changed) yield* Effect.promise(() => sim.control.sendPageMessage(b.businessId, id))
      const incremental = yield* sync.runOnce(b, first, { gapFill: true })
      assert.strictEqual(incremental.mode, "incremental")
      assert.isAtMost(incremental.pages, 3, "one page of conversations, one page of messages for each changed one")
      yield* rm.catchUp()
      assert.strictEqual(yield* count("message"), messages + 2, "the two new messages, nothing lost")

      // The second page's access expires; the next (incremental) pass of every resource runs.
      yield* Effect.promise(() => sim.control.expirePage(b.businessId, PAGE_IDS[1]!))
      const outcomes = yield* Effect.forEach(reads, (op) => Effect.map(sync.runOnce(b, op, { gapFill: true }), (r) => [op.resource, r.outcome] as const))
      const paused = outcomes.flatMap(([, o], i) => (o === "paused" ? [Operation.resourceKey(reads[i]!)] : []))
      assert.deepStrictEqual(paused, [Operation.resourceKey(conversationsOf(PAGE_IDS[1]!))], "the expired page's conversations only")
      assert.isTrue(outcomes.filter(([, o]) => o !== "paused").every(([, o]) => o === "done"), JSON.stringify(outcomes))
      // Page customers have no time to read by: a full pass (the reconciliation) finds the expiry.
      const customers = reads.filter((op) => op.resource === "customer")
      const full = yield* Effect.forEach(customers, (op) => Effect.map(sync.runOnce(b, op, { forceFull: true }), (r) => r.outcome))
      assert.deepStrictEqual(full, ["done", "paused", "done"])
      const second = conversationsOf(PAGE_IDS[1]!)
      assert.strictEqual((yield* states.state(b.appId, b.businessId, Operation.resourceKey(second))).paused?.code, "ERR_PAGE_EXPIRED", "the reason is kept")
      // Paused, it is not pulled again; the others are.
      assert.strictEqual((yield* sync.runOnce(b, second, { gapFill: true })).mode, "skipped")
      assert.strictEqual((yield* sync.runOnce(b, conversationsOf(PAGE_IDS[2]!), { gapFill: true })).outcome, "done")
      yield* rm.catchUp()
      assert.strictEqual(yield* count("conversation"), 3 * PER_PAGE, "what the copy held of the expired page stays")
    }).pipe(Effect.provide(testLayer())), 60_000)
})
