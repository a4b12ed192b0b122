import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { SimulatorControl } from "@ocs/simulator"
import { Ids } from "@ocs/protocol"
import { adminClient, eventually, fullSyncsDone, parseLoose, type Proc, startServerProcess, startSimulatorProcess, stopServerAndSimulator, tempDir } from "./processes.ts"
import { createTenant, listAll, serverAgainst } from "./simulatorReads.ts"

// A copy that cannot drift (docs/architecture.md §4.14): 50 tenants, a fifth of the webhooks
// dropped, data changed and deleted without webhooks (products, orders, customers, bills). After one reconciliation cycle every
// tenant's read models equal the simulator's data, and a plugin counting change events saw
// exactly one per change, whether a webhook or a pull told us, and whichever came first (late
// webhooks of changes the pulls already found are no second event).

const TENANTS = 50
const READS = ["product/list", "order/list", "product/inventory", "customer/list", "bill/list"]
const ADMIN_KEY = "reconciliation-admin-key-0123456789"
const counter = fileURLToPath(new URL("./fixtures/change-counter.ts", import.meta.url))
const eventsFile = Path.join(tempDir("ocs-counter-"), "events.jsonl")

let sim: { proc: Proc; url: string }
let server: { proc: Proc; url: string }
let control: SimulatorControl
const tenants: Array<{ appId: string; businessId: string; accessToken: string; verifyToken: string }> = []

const admin = adminClient(() => server.url, ADMIN_KEY)

const DAY_MS = 24 * 3600 * 1000
/** Orders created in the last 93 days (three 31-day createdAt windows), newest first: well inside the sync's horizon. */
const recentOrders = async (t: (typeof tenants)[number]) => {
  const out: Array<any> = []
  const now = Date.now()
  for (let end = now; end > now - 93 * DAY_MS; end -= 31 * DAY_MS) {
    out.push(...await listAll(sim.url, t, "order/list", { createdAtFrom: Math.floor((end - 31 * DAY_MS) / 1000) + 1, createdAtTo: Math.floor(end / 1000) }))
  }
  return out
}

/** The projection and the plugin have handled everything in the log, twice in a row (relayed changes land after). */
const settled = async (what: string) => {
  let quiet = 0
  await eventually(what, async () => {
    const ready = (await fetch(`${server.url}/readyz`).then((r) => r.text()).then(parseLoose)) as any
    const plugin = (await admin("/admin/plugins")).body.plugins[0]
    const idle = ready.lag !== null && ready.lag.records === 0 && plugin.lag === 0
    quiet = idle ? quiet + 1 : 0
    return quiet >= 3 ? true : undefined
  }, 60_000, 400)
}

/** The plugin's events: distinct ids (delivery is at least once), counted per tenant and `tag:entity`. */
const counted = () => {
  const seen = new Set<string>()
  const perTenant = new Map<string, Map<string, number>>()
  const lines = Fs.existsSync(eventsFile) ? Fs.readFileSync(eventsFile, "utf8").split("\n").filter((l) => l !== "") : []
  const sources = new Map<string, number>()
  for (const line of lines) {
    const e = JSON.parse(line) as { id: string; tag: string; tenant: string; entity: string; source: string }
    if (seen.has(e.id)) continue
    seen.add(e.id)
    const m = perTenant.get(e.tenant) ?? new Map<string, number>()
    perTenant.set(e.tenant, m)
    m.set(`${e.tag}:${e.entity}`, (m.get(`${e.tag}:${e.entity}`) ?? 0) + 1)
    sources.set(e.source, (sources.get(e.source) ?? 0) + 1)
  }
  return { perTenant, sources }
}

/** Runs `f` over `items`, `n` at a time. */
const pool = async <A>(items: ReadonlyArray<A>, n: number, f: (a: A, i: number) => Promise<void>) => {
  let next = 0
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) {
      const i = next++
      await f(items[i]!, i)
    }
  }))
}

beforeAll(async () => {
  sim = await startSimulatorProcess(["--rate-window", "3", "--products", "20"])
  control = new SimulatorControl(sim.url)
  for (let i = 0; i < TENANTS; i++) {
    // Orders and bills of the last 30 days: every one inside the sync's horizon and a bill/list
    // query without a range.
    tenants.push(await createTenant(control, { products: 30, orders: 8, bills: 4, customers: 5, historyDays: 30 }))
  }
  server = await startServerProcess({
    ...serverAgainst(sim.url, ADMIN_KEY, READS),
    // Nothing runs by itself during the test: the reconciliation below is the one cycle.
    sync: { resources: READS, intervalSeconds: 3600, reconcileSeconds: 3600, overlapSeconds: 5, horizonDays: 120, gapFillSilenceSeconds: 3600 },
    webhooks: { silenceAlertSeconds: 3600 },
    plugins: [{ use: counter, config: { file: eventsFile } }],
    tenants: tenants.map((t) => ({ appId: t.appId, verifyTokens: [t.verifyToken], businesses: [{ businessId: t.businessId, accessToken: t.accessToken }] }))
  }, { OCS_ENCRYPTION_KEY: "22".repeat(32) })
}, 120_000)

afterAll(async () => {
  await stopServerAndSimulator(server, sim)
})

describe("reconciliation: 50 tenants, lost webhooks, silent deletes and edits", () => {
  it("after one cycle the read models equal the simulator's data and a plugin saw exactly one event per change", async () => {
    // 1. The first full sync of every tenant: a baseline, which reveals no change.
    await fullSyncsDone(admin, TENANTS * READS.length, "the first full sync of every tenant")

    // 2. Webhooks on; webhooksEnabled makes each tenant pull what it missed (gap fill), which
    //    is nothing yet.
    const enabledAt = Date.now()
    for (const t of tenants) {
      const r = await control.enableWebhooks(t.appId, { callbackUrl: `${server.url}/webhooks/${t.appId}`, verifyToken: t.verifyToken })
      assert.isTrue(r.enabled)
    }
    await eventually("the gap fill after webhooksEnabled", async () => {
      const { body } = await admin("/admin/sync")
      const filled = body.sync.filter((s: any) => s.lastRunAt !== null && s.lastRunAt >= enabledAt).length
      return filled === TENANTS * READS.length ? filled : undefined
    }, 60_000, 500)
    await settled("the projection after the gap fill")
    assert.strictEqual(counted().perTenant.size, 0, "neither the baseline nor a pull of unchanged data is a change")

    // 3. A fifth of the webhooks are lost; some changes send none at all.
    await control.addFault({ kind: "webhookDrop", probability: 0.2 })
    const expected = new Map<string, Map<string, number>>()
    const silentlyDeleted = new Map<string, string>()
    /** Per tenant: a silent edit and a silent delete whose webhooks will come late, after the pull found them. */
    const late = new Map<string, { readonly product: string; readonly order: string }>()
    await pool(tenants, 8, async (t) => {
      const products = await listAll(sim.url, t, "product/list")
      const orders = await recentOrders(t)
      assert.isAtLeast(orders.length, 2, `orders of ${Ids.tenantKey(t)}`)
      const [p1, p2, p3, p4, p5] = products.map((p) => String(p.id))
      const [o1, o2] = orders.map((o) => String(o.info.id))
      // Customers and bills have no webhook: their deletion is always silent.
      const [c1] = (await listAll(sim.url, t, "customer/list")).map((c) => String(c.id))
      const [b1] = (await listAll(sim.url, t, "bill/list")).map((b) => String(b.id))
      assert.isDefined(c1, `customers of ${Ids.tenantKey(t)}`)
      assert.isDefined(b1, `bills of ${Ids.tenantKey(t)}`)
      const status = orders[0].info.status === 59 ? 60 : 59
      await control.updateProduct(t.businessId, p1!, { name: `renamed ${p1}`, price: 1234 })
      await control.updateProduct(t.businessId, p2!, { name: `silently ${p2}` }, { silent: true })
      await control.deleteProduct(t.businessId, p3!)
      await control.deleteProduct(t.businessId, p4!, { silent: true })
      await control.changeInventory(t.businessId, [{ productId: p5!, depotId: 1, quantity: 777 }])
      await control.updateOrder(t.businessId, o1!, { status })
      await control.deleteOrder(t.businessId, o2!, { silent: true })
      await control.deleteCustomer(t.businessId, c1!)
      await control.deleteBill(t.businessId, b1!)
      const added = String(((await control.addOrder(t.businessId, { customerName: "reconciled", products: [{ productId: p1!, quantity: 1 }] })) as any).order.info.id)
      silentlyDeleted.set(Ids.tenantKey(t), p4!)
      late.set(Ids.tenantKey(t), { product: p2!, order: o2! })
      expected.set(Ids.tenantKey(t), new Map([
        [`ProductUpdated:${p1}`, 1], [`ProductUpdated:${p2}`, 1], [`ProductDeleted:${p3}`, 1], [`ProductDeleted:${p4}`, 1],
        [`InventoryChanged:${p5}`, 1], [`OrderUpdated:${o1}`, 1], [`OrderStatusChanged:${o1}`, 1], [`OrderDeleted:${o2}`, 1],
        [`OrderAdded:${added}`, 1], [`CustomerDeleted:${c1}`, 1], [`BillDeleted:${b1}`, 1]
      ]))
    })
    await control.drainDeliveries(30_000)
    const dropped = (await control.deliveries({ outcome: "dropped", limit: 10_000 })).deliveries.length
    const delivered = (await control.deliveries({ outcome: "ok", limit: 10_000 })).deliveries.length
    assert.isAbove(dropped, 0, "the fault dropped webhooks")
    await control.clearFaults()
    await settled("the projection of the webhooks that arrived")

    // 4. A failed pass deletes nothing: the first tenant's product read is refused.
    const first = tenants[0]!
    const firstKey = Ids.tenantKey(first)
    const refused = await control.addFault({ kind: "malformed", variant: "nonJson", businessId: first.businessId, operation: "product/list", count: 1000 })
    const failed = (await admin(`/admin/tenants/${first.appId}/${first.businessId}/sync?full=true`, { method: "POST" })).body.reports
    await control.removeFault(refused.id)
    assert.strictEqual(failed[0].outcome, "error")
    await settled("the projection after the failed pass")
    const kept = await admin(`/admin/tenants/${first.appId}/${first.businessId}/products/${silentlyDeleted.get(firstKey)}`)
    assert.strictEqual(kept.status, 200)
    assert.isFalse(kept.body.deleted, "a failed pass deleted nothing")
    assert.isUndefined(counted().perTenant.get(firstKey)?.get(`ProductDeleted:${silentlyDeleted.get(firstKey)}`))

    // 5. One reconciliation cycle: a full pass of every resource of every tenant.
    await pool(tenants, 10, async (t) => {
      const { status, body } = await admin(`/admin/tenants/${t.appId}/${t.businessId}/sync?full=true`, { method: "POST" })
      assert.strictEqual(status, 200)
      for (const r of body.reports) assert.strictEqual(r.outcome, "done", `${Ids.tenantKey(t)}: ${JSON.stringify(r)}`)
    })
    await settled("the projection of the reconciliation and of the changes it found")

    // 5b. The late webhooks of changes the pulls already found: the same state, told again.
    await pool(tenants, 8, async (t) => {
      const { product, order } = late.get(Ids.tenantKey(t))!
      // The control client gives ids as strings; the service sends them as numbers.
      await control.emitEvent(t.businessId, "productUpdate", { ...(await control.product(t.businessId, product)), id: Number(product) })
      await control.emitEvent(t.businessId, "orderDelete", [Number(order)])
    })
    await control.drainDeliveries(30_000)
    await settled("the projection of the late webhooks")

    // 6. Read models equal the simulator's data.
    await control.setRateLimits({ enabled: false })
    await pool(tenants, 8, async (t) => {
      const tenant = `/admin/tenants/${t.appId}/${t.businessId}`
      const products = (await admin(`${tenant}/products?limit=1000`)).body.items
      const expectedProducts = await listAll(sim.url, t, "product/list")
      assert.deepStrictEqual(
        products.map((p: any) => `${p.id}:${p.name}:${Number(p.price)}`).sort(),
        expectedProducts.map((p) => `${p.id}:${p.name}:${Number(p.prices.retail)}`).sort(),
        `products of ${Ids.tenantKey(t)}`
      )
      const windowStart = Date.now() - 92 * DAY_MS
      const recent = await recentOrders(t)
      const orders = new Map((await admin(`${tenant}/orders?limit=1000`)).body.items.map((o: any) => [String(o.id), o]))
      for (const o of recent) assert.strictEqual((orders.get(String(o.info.id)) as any)?.status, String(o.info.status), `order ${o.info.id}`)
      const recentIds = new Set(recent.map((o) => String(o.info.id)))
      const extra = [...orders.values()].filter((o: any) => Number(o.createdAtMs) > windowStart && !recentIds.has(String(o.id)))
      assert.deepStrictEqual(extra.map((o: any) => o.id), [], "no order the service no longer serves")
      assert.deepStrictEqual(
        (await admin(`${tenant}/customers?limit=1000`)).body.items.map((c: any) => String(c.id)).sort(),
        (await listAll(sim.url, t, "customer/list")).map((c) => String(c.id)).sort(),
        `customers of ${Ids.tenantKey(t)}`
      )
      assert.deepStrictEqual(
        (await admin(`${tenant}/bills?limit=1000`)).body.items.map((x: any) => String(x.id)).sort(),
        (await listAll(sim.url, t, "bill/list")).map((x) => String(x.id)).sort(),
        `bills of ${Ids.tenantKey(t)}`
      )
      const levels = new Map((await admin(`${tenant}/inventory`)).body.items.map((l: any) => [`${l.productId}@${l.depotId}`, Number(l.remain)]))
      for (const item of await listAll(sim.url, t, "product/inventory")) {
        for (const d of item.inventory.depots) assert.strictEqual(levels.get(`${item.productId}@${d.id}`), d.remain, `stock of ${item.productId} in depot ${d.id}`)
      }
    })

    // 7. Exactly one event per change, whatever told us (a webhook, or a pull for the lost ones).
    const { perTenant, sources } = counted()
    for (const [key, want] of expected) {
      assert.deepStrictEqual(Object.fromEntries([...(perTenant.get(key) ?? new Map())].sort()), Object.fromEntries([...want].sort()), `events of ${key}`)
    }
    assert.strictEqual(perTenant.size, TENANTS)
    console.log(`[reconciliation] ${TENANTS} tenants, ${expected.size * 11} changes (${TENANTS * 5} silent); webhooks: ${delivered} delivered, ${dropped} dropped; events seen by the plugin: ${sources.get("webhook") ?? 0} from webhooks, ${sources.get("sync") ?? 0} from pulls`)
    assert.isAbove(sources.get("sync") ?? 0, TENANTS * 5, "changes found by pulls reached the plugin")
    assert.isAbove(sources.get("webhook") ?? 0, 0, "changes told by webhooks reached the plugin")
  }, 240_000)

  it("per-tenant settings: validated with the path of each field at fault, then used by the tenant's sync", async () => {
    const t = tenants[0]!
    const settings = `/admin/tenants/${t.appId}/${t.businessId}/settings`
    const put = (body: unknown) => admin(settings, { method: "PUT", body: JSON.stringify(body) })
    const bad = await put({ intervalSeconds: 0, depots: [1, "two"], colour: "red" })
    assert.strictEqual(bad.status, 400)
    for (const path of [`["intervalSeconds"]`, `["depots"][1]`, `["colour"]`]) assert.include(bad.body.error, path)
    const unknown = await put({ resources: ["product/list", "no/such-read"] })
    assert.strictEqual(unknown.status, 400)
    assert.include(unknown.body.error, "resources[1]")
    assert.deepStrictEqual((await admin(settings)).body.settings, {}, "nothing refused was stored")

    const ok = await put({ resources: ["product/list", "product/inventory"], depots: [1, 2], intervalSeconds: 120, gapFillSilenceSeconds: 900 })
    assert.strictEqual(ok.status, 200)
    assert.deepStrictEqual(ok.body.resources, ["pos:/v3.0/product/list", `pos:/v3.0/product/inventory?{"depotIds":[1,2]}`])
    const again = (await admin(settings)).body
    assert.deepStrictEqual(again.settings, { resources: ["product/list", "product/inventory"], depots: [1, 2], intervalSeconds: 120, gapFillSilenceSeconds: 900 })
    // A sync of the tenant now reads only its resources, its stock in its depots only.
    const { body } = await admin(`/admin/tenants/${t.appId}/${t.businessId}/sync`, { method: "POST" })
    assert.strictEqual(body.reports.length, 2)
    await eventually("the depot-narrowed stock read", async () => {
      const states = (await admin("/admin/sync")).body.sync.filter((s: any) => s.appId === t.appId && s.resource.includes("depotIds"))
      return states.length === 1 && states[0].fullCompletedAt !== null ? true : undefined
    }, 30_000, 300)
  }, 60_000)
})
