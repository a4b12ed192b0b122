/**
 * `readModels.store: postgres` (docs/architecture.md §4.34): the real server (in this process, on
 * 127.0.0.1) against the simulator, pulling and receiving real webhooks, projects into a real
 * PostgreSQL server, and its admin read routes answer from PostgreSQL: what they return equals
 * the simulator's data, and a row changed in PostgreSQL alone shows in the admin API.
 */
import { assert, describe, it } from "@effect/vitest"
import { databaseOfFile, postgresUnavailable } from "@ocs/postgres-server/testing"
import { type RunningSimulator, startSimulator } from "@ocs/simulator"
import { Effect } from "effect"
import * as Fs from "node:fs"
import { PostgresStore } from "@ocs/read-models/postgres"
import * as Config from "../../src/boot/Config.ts"
import * as Server from "../../src/http/Server.ts"
import { eventually, tempDir } from "../processes.ts"
import { createTenant, listAll, serverAgainst, type SimulatorTenant } from "../simulatorReads.ts"

const database = databaseOfFile()
const ADMIN_KEY = "postgres-admin-key-0123456789"
const READS = ["product/list", "order/list", "customer/list", "business/depot"]
const SCHEMA = "ocs_copy"

describe.skipIf(postgresUnavailable())("readModels.store: postgres", () => {
  it.live("the server projects pulls and webhooks into PostgreSQL, and its admin read routes answer from there", () =>
    Effect.gen(function*() {
      const sim: RunningSimulator = yield* Effect.acquireRelease(Effect.promise(() => startSimulator({ port: 0, demo: false })), (s) => Effect.promise(() => s.close()))
      const control = sim.control
      const tenants: Array<Awaited<ReturnType<typeof createTenant>>> = []
      for (let i = 0; i < 2; i++) tenants.push(yield* Effect.promise(() => createTenant(control, { products: 130 + i, orders: 12, bills: 4, customers: 6, bigIds: i === 1 })))
      const dataDir = tempDir("ocs-postgres-copy-")
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dataDir, { recursive: true, force: true })))
      const config = yield* Config.load({
        overrides: {
          ...serverAgainst(sim.url, ADMIN_KEY, READS),
          dataDir,
          // One full pull at start, then webhooks only: a later pull of the same state would rewrite `lastSource`.
          sync: { resources: ["product", "order", "customer", "depot"], intervalSeconds: 3600, reconcileSeconds: 3600, overlapSeconds: 5 },
          webhooks: { silenceAlertSeconds: 3600 },
          readModels: { store: "postgres", postgres: { url: database(), schema: SCHEMA, pool: 2 } },
          tenants: tenants.map((t) => ({ appId: t.appId, verifyTokens: [t.verifyToken], businesses: [{ businessId: t.businessId, accessToken: t.accessToken }] })),
          logLevel: "error"
        }
      })

      yield* Effect.gen(function*() {
        const server = yield* Server.start(config)
        // a connection of our own to the same schema, for the checks
        const copy = yield* PostgresStore.make({ url: database(), schema: SCHEMA, pool: 1, detectChanges: false })
        const sql = <Row extends object>(text: string, values: ReadonlyArray<unknown> = []) => copy.query<Row>(text, values)
        const admin = async (path: string) => {
          const res = await fetch(`${server.url}${path}`, { headers: { "x-admin-key": ADMIN_KEY } })
          return { status: res.status, body: await res.json() as any }
        }
        const products = (t: SimulatorTenant) => admin(`/admin/tenants/${t.appId}/${t.businessId}/products?limit=1000`).then((r) => r.body.items as Array<any>)

        // the full pull, then webhooks: a rename, a stock move, a new order
        yield* Effect.promise(() => eventually("the pulled products in the admin API", async () => {
          for (const t of tenants) if ((await products(t)).length !== (await listAll(sim.url, t, "product/list")).length) return undefined
          return true
        }, 60_000, 300))
        for (const t of tenants) {
          const r = yield* Effect.promise(() => control.enableWebhooks(t.appId, { callbackUrl: `${server.url}/webhooks/${t.appId}`, verifyToken: t.verifyToken }))
          assert.isTrue(r.enabled)
        }
        const renamed: Array<string> = []
        for (const [i, t] of tenants.entries()) {
          const p = (yield* Effect.promise(() => listAll(sim.url, t, "product/list")))[5 + i]
          renamed.push(String(p.id))
          yield* Effect.promise(() => control.updateProduct(t.businessId, p.id, { name: `renamed by webhook ${i}`, price: 1234 + i }))
          yield* Effect.promise(() => control.addOrder(t.businessId, { customerName: `PG ${i}`, customerMobile: "0900000000", products: [{ productId: p.id, quantity: 2 }] }))
        }
        yield* Effect.promise(() => control.drainDeliveries(30_000))

        // every product and order of each tenant, as the simulator serves them, read through the admin API
        for (const [i, t] of tenants.entries()) {
          const tenant = `/admin/tenants/${t.appId}/${t.businessId}`
          yield* Effect.promise(() => eventually(`the copy of ${t.businessId}`, async () => {
            const expected = await listAll(sim.url, t, "product/list")
            const mine = new Map((await products(t)).map((p) => [String(p.id), p]))
            if (mine.size !== expected.length) return undefined
            for (const e of expected) if (mine.get(String(e.id))?.name !== e.name) return undefined
            const orders = (await admin(`${tenant}/orders?limit=1000`)).body.items as Array<any>
            return orders.some((o) => o.customerName === `PG ${i}` || JSON.stringify(o.record).includes(`PG ${i}`)) ? true : undefined
          }, 60_000, 300))
          const one = yield* Effect.promise(() => admin(`${tenant}/products/${renamed[i]}`))
          assert.strictEqual(one.status, 200)
          assert.strictEqual(one.body.name, `renamed by webhook ${i}`)
          assert.strictEqual(one.body.lastSource, "webhook")
        }

        // the rows are in PostgreSQL, with the webhook's name
        const t0 = tenants[0]!
        const rows = yield* sql<{ id: string; name: string }>(`SELECT id, name FROM ${SCHEMA}.products WHERE app_id = $1 AND business_id = $2 AND deleted = 0`, [t0.appId, t0.businessId])
        assert.strictEqual(rows.length, (yield* Effect.promise(() => products(t0))).length)
        assert.strictEqual(rows.find((r) => r.id === renamed[0])?.name, "renamed by webhook 0")
        // and the admin API reads them there: a row changed in PostgreSQL alone shows at once
        yield* sql(`UPDATE ${SCHEMA}.products SET name = 'only in postgres' WHERE app_id = $1 AND business_id = $2 AND id = $3`, [t0.appId, t0.businessId, renamed[0]])
        assert.strictEqual((yield* Effect.promise(() => admin(`/admin/tenants/${t0.appId}/${t0.businessId}/products/${renamed[0]}`))).body.name, "only in postgres")
        const consumers = yield* sql<{ consumer: string }>(`SELECT consumer FROM ${SCHEMA}.consumer_checkpoints`)
        assert.deepStrictEqual(consumers.map((r) => r.consumer), ["read-models-postgres"])
      }).pipe(Effect.scoped, Effect.provide(Server.layer(config)))
    }).pipe(Effect.scoped), 120_000)
})
