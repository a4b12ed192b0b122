/**
 * The write path end to end (docs/architecture.md §4.30): the server and the simulator as
 * processes over loopback. Many tenants ask for commands of every kind through the admin API
 * while the simulator loses answers after applying them, fails with 5xx before applying,
 * forces 429s, and the server is SIGKILLed mid-run and started again (the callers resubmit
 * what they had no answer for, with the same idempotency key). Properties: every command
 * ends final (or in doubt with its evidence); every confirmed add exists exactly once in the
 * simulator and every failed one not at all (counted by key or marker); no call reached a
 * locked key.
 *
 * Scale: `OCS_COMMANDS_TENANTS` x `OCS_COMMANDS_PER_TENANT` (CI: 8 x 30; the full
 * scale, 100 x 100, runs by hand: `OCS_COMMANDS_TENANTS=100 OCS_COMMANDS_PER_TENANT=100`).
 */
import { assert, describe, it } from "vitest"
import { ADMIN_KEY, addTenant, admin, agent, eventually, pool, request, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

const TENANTS = Number(process.env["OCS_COMMANDS_TENANTS"] ?? 8)
const PER_TENANT = Number(process.env["OCS_COMMANDS_PER_TENANT"] ?? 30)
const CONCURRENCY = 32
/** Bounds that grow with the scale (a hand-run at full scale takes minutes). */
const SETTLE_MS = Math.max(90_000, TENANTS * PER_TENANT * 40)
const TEST_MS = Math.max(240_000, TENANTS * PER_TENANT * 120)

const KINDS = [
  "product.add", "product.edit", "order.add", "order.edit", "customer.add", "bill.addRetail",
  "inventory.importSupplier", "inventory.exportSupplier", "inventory.importOther", "inventory.exportOther"
] as const
type Kind = typeof KINDS[number]
const WRITES: Record<Kind, string> = {
  "product.add": "product/add",
  "product.edit": "product/edit",
  "order.add": "order/add",
  "order.edit": "order/edit",
  "customer.add": "customer/add",
  "bill.addRetail": "bill/addretail",
  "inventory.importSupplier": "inventory/importsupplier",
  "inventory.exportSupplier": "inventory/exportsupplier",
  "inventory.importOther": "inventory/importother",
  "inventory.exportOther": "inventory/exportother"
}

interface Seeded extends Tenant {
  readonly products: ReadonlyArray<string>
  readonly orders: ReadonlyArray<string>
}

const tenants: Array<Seeded> = []

const list = async (sim: string, t: Tenant, operation: string, idPath: (r: any) => unknown) => {
  const a = await request(`${sim}/pos/v3.0/${operation}?appId=${t.appId}&businessId=${t.businessId}`, {
    body: JSON.stringify({ paginator: { size: 20 } }),
    headers: { authorization: t.accessToken }
  })
  return (JSON.parse(a.text).data as Array<unknown>).map((r) => String(idPath(r)))
}

const suite = reliabilitySuite({
  simFlags: ["--rate-window", "3", "--products", "10"],
  setupTimeoutMs: 120_000 + TENANTS * 2000,
  setup: async (s) => {
    for (let i = 0; i < TENANTS; i++) {
      const t = await s.tenant({ products: 20, orders: 0 })
      // Fresh orders (new): order/edit may still change them.
      const orders: Array<string> = []
      for (let k = 0; k < 3; k++) {
        const o = (await s.control.addOrder(t.businessId, {}, { silent: true })).order as any
        orders.push(String(o.info?.id ?? o.id))
      }
      tenants.push({ ...t, products: await list(s.sim.url, t, "product/list", (r) => r.id), orders })
    }
  }
})

interface Ask {
  readonly t: Seeded
  readonly kind: Kind
  readonly key: string
  /** The natural key the simulator counts the effect by (adds with one). */
  readonly natural?: string
  readonly payload: unknown
}

const ask = (t: Seeded, ti: number, i: number): Ask => {
  const kind = KINDS[i % KINDS.length]!
  const key = `t${ti}-c${i}`
  const product = t.products[i % t.products.length]!
  const lines = [{ id: product, quantity: 1 + (i % 3), price: 1000 }]
  switch (kind) {
    case "product.add":
      return { t, kind, key, natural: `AP-${key}`, payload: { appProductId: `AP-${key}`, name: `Product ${key}`, price: 1000 + i } }
    case "product.edit":
      return { t, kind, key, payload: { id: product, price: 2000 + i } }
    case "order.add":
      return { t, kind, key, natural: `AO-${key}`, payload: { channel: { appOrderId: `AO-${key}` }, shippingAddress: { name: "Lan", mobile: "0912000001" }, products: [{ id: product, price: 1000, quantity: 1 }] } }
    case "order.edit":
      return { t, kind, key, payload: { info: { id: t.orders[i % t.orders.length]!, description: `edited ${key}` } } }
    case "customer.add": {
      const mobile = `09${String(ti * 100_000 + i).padStart(8, "0")}`
      return { t, kind, key, natural: mobile, payload: { name: `Customer ${key}`, mobile } }
    }
    case "bill.addRetail":
      return { t, kind, key, payload: { depotId: 1, products: lines.map(({ id, quantity }) => ({ id, quantity })) } }
    case "inventory.importSupplier":
    case "inventory.exportSupplier":
      return { t, kind, key, payload: { depotId: 1, supplierId: 1, products: lines } }
    case "inventory.importOther":
    case "inventory.exportOther":
      return { t, kind, key, payload: { depotId: 1, products: lines } }
  }
}

const base = (t: Tenant) => `/admin/tenants/${t.appId}/${t.businessId}/commands`

describe("commands: lost answers, 5xx, 429s and a SIGKILL", () => {
  it("every command ends final; every confirmed add exists exactly once; no call during a lock", async () => {
    const control = suite.control
    // Faults on every write: 20 % of answers lost after applying, 5 % 5xx before, forced 429s.
    for (const op of Object.values(WRITES)) {
      await control.addFault({ kind: "lostAnswer", operation: op, probability: 0.2 })
      await control.addFault({ kind: "status", status: 503, operation: op, probability: 0.05 })
      await control.addFault({ kind: "forced429", operation: op, probability: 0.02 })
    }
    const server = suite.server("ocs-rel-commands-", { tenants: [], resources: ["product"] })
    await server.start()
    for (const t of tenants) await addTenant(server.url, t)

    // The simulator's call log, followed while the run goes: calls that reached a locked key.
    let since = (await control.calls({ limit: 1 })).lastSeq
    let lockedCalls = 0
    let writeCalls = 0
    const follow = async () => {
      for (;;) {
        const page = await control.calls({ since, limit: 5000 })
        lockedCalls += page.calls.filter((c) => c.locked).length
        writeCalls += page.calls.filter((c) => Object.values(WRITES).includes(c.operation)).length
        if (page.calls.length === 0) return
        since = page.calls[page.calls.length - 1]!.seq
      }
    }
    const run = { following: true }
    const follower = (async () => {
      while (run.following) {
        await follow()
        await new Promise((r) => setTimeout(r, 500))
      }
    })()

    const asks = tenants.flatMap((t, ti) => Array.from({ length: PER_TENANT }, (_, i) => ask(t, ti, i)))
    const answered = new Map<string, string>()
    const started = performance.now()
    const submit = async (a: Ask, http: ReturnType<typeof agent>, url: string) => {
      const r = await request(`${url}${base(a.t)}`, {
        method: "POST",
        body: JSON.stringify({ kind: a.kind, payload: a.payload }),
        headers: { "x-admin-key": ADMIN_KEY, "idempotency-key": a.key },
        agent: http
      })
      if (r.status === 201 || r.status === 200) answered.set(`${a.t.businessId}:${a.key}`, JSON.parse(r.text).id)
      else if (r.status !== 0) throw new Error(`${a.kind} ${a.key}: ${r.status} ${r.text}`)
    }

    // 1. Submit until 40 % are answered, then SIGKILL the server mid-run (sends in flight).
    let killed = false
    let killing: Promise<void> | undefined
    const http1 = agent(CONCURRENCY)
    const url1 = server.url
    await pool(asks, CONCURRENCY, async (a) => {
      await submit(a, http1, url1)
      if (!killed && answered.size >= asks.length * 0.4) {
        killed = true
        killing = server.kill()
      }
    }, () => killed)
    await killing
    http1.destroy()
    assert.isTrue(killed, "the kill happened during the run")
    const beforeKill = answered.size

    // 2. Start again; every ask without an answer is sent again with its key (a repeat is the same command).
    await server.start()
    const http2 = agent(CONCURRENCY)
    const repeats = asks.filter((_, i) => i % 7 === 0 || !answered.has(`${asks[i]!.t.businessId}:${asks[i]!.key}`))
    const before = new Map(answered)
    await pool(repeats, CONCURRENCY, (a) => submit(a, http2, server.url))
    http2.destroy()
    for (const [k, id] of before) assert.strictEqual(answered.get(k), id, `a repeated key answers its first command (${k})`)
    assert.strictEqual(answered.size, asks.length)
    // A second SIGKILL while the engine is sending and reading back; it resumes at start.
    await server.kill()
    await server.start()

    // 3. Every command settles: final, or in doubt and left to a person with its evidence.
    const all = await eventually("every command settled", async () => {
      const lists = await Promise.all(tenants.map((t) => admin(server.url, `${base(t)}?limit=1000`)))
      const items = lists.flatMap((l) => l.body.items as Array<any>)
      // Final, or in doubt left to a person (a doubt still being read back is not settled).
      const settled = (c: any) =>
        c.state === "confirmed" || c.state === "failed" || c.state === "cancelled" ||
        (c.state === "inDoubt" && ["ReadBackFailed", "AttemptsExhausted"].includes(c.reason?.tag))
      return items.length === asks.length && items.every(settled) ? items : undefined
    }, SETTLE_MS, 1000)
    run.following = false
    await follower
    await follow()
    const elapsed = Math.round(performance.now() - started)

    // 4. Effects in the simulator: confirmed adds once, failed ones never.
    const byState: Record<string, number> = {}
    for (const c of all) byState[c.state] = (byState[c.state] ?? 0) + 1
    const byId = new Map(all.map((c) => [c.id, c]))
    let duplicates = 0
    let missing = 0
    let unexpected = 0
    for (const t of tenants) {
      for (const kind of KINDS) {
        const mine = asks.filter((a) => a.t === t && a.kind === kind).map((a) => ({ a, c: byId.get(answered.get(`${t.businessId}:${a.key}`)!)! }))
        if (kind === "product.edit" || kind === "order.edit" || mine.length === 0) continue
        const natural = mine[0]!.a.natural !== undefined
        const counts = await control.countEffects(t.businessId, natural
          ? { kind, keys: mine.map((m) => m.a.natural!) }
          : { kind, markers: mine.map((m) => m.c.marker as string) })
        for (const { a, c } of mine) {
          const n = natural ? counts.keys[a.natural!]! : counts.markers[c.marker]!
          if (c.state === "confirmed" && n > 1) duplicates++
          if (c.state === "confirmed" && n === 0) missing++
          if ((c.state === "failed" || c.state === "cancelled") && n !== 0) unexpected++
        }
      }
    }
    const inDoubt = all.filter((c) => c.state === "inDoubt")
    console.log(
      `[commands] ${TENANTS} tenants x ${PER_TENANT} = ${asks.length} commands in ${elapsed} ms; answered before the first SIGKILL ${beforeKill}; ` +
        `states ${JSON.stringify(byState)}; write calls ${writeCalls}; resolved after a lost answer or refusal ${all.filter((c) => c.reason !== undefined && c.state === "confirmed").length}; ` +
        `calls during a lock ${lockedCalls}; ` +
        `duplicates ${duplicates}; missing ${missing}; failed with an effect ${unexpected}; in doubt ${inDoubt.length}`
    )
    for (const c of inDoubt.slice(0, 5)) console.log(`[commands] in doubt ${c.kind} ${c.idempotencyKey}: ${c.reason?.tag} ${c.evidence ?? ""}`)
    assert.strictEqual(duplicates, 0, "a confirmed effect applied twice")
    assert.strictEqual(missing, 0, "a confirmed effect not in the simulator")
    assert.strictEqual(unexpected, 0, "a failed command left an effect")
    assert.strictEqual(lockedCalls, 0, "a call reached a locked key")
    for (const c of inDoubt) assert.isDefined(c.evidence ?? c.reason, `in doubt without what the engine saw: ${c.id}`)
    assert.isAtLeast(byState["confirmed"] ?? 0, asks.length * 0.8)
  }, TEST_MS)
})
