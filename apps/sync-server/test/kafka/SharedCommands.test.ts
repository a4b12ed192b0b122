/**
 * Three servers on one topic share one command ledger (docs/architecture.md §4.31): commands
 * asked of any server, some with one idempotency key on all three at once, are one command each,
 * sent by the owner of their tenant; the simulator loses a quarter of the write answers after
 * applying them; the owner of one tenant is killed (SIGKILL) with an attempt on the wire.
 * Afterwards every command has the same final state on both survivors and, once it is started
 * again on its folder (its outbox relays what it held: late records), on the dead one too, and
 * every effect exists exactly once in the simulator (products by appProductId, bills by the
 * engine's marker).
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { kafkaBrokers, kafkaUnavailable } from "@ocs/kafka-broker/testing"
import { SimulatorControl } from "@ocs/simulator"
import { tenantPartition as partitionOf } from "@ocs/sync/Ownership"
import { adminClient, eventually, type Proc, restartServerProcess, startServerProcess, startSimulatorProcess } from "../processes.ts"
import { createTenant, listAll, type SimulatorTenant } from "../simulatorReads.ts"

const ADMIN_KEY = "shared-commands-admin-key-01"
const TOPIC = `ocs-commands-${Date.now()}`
const TENANTS = 4
const PARTITIONS = 16
const FINAL = new Set(["confirmed", "failed", "cancelled"])

describe.skipIf(kafkaUnavailable())("several servers share one command ledger", () => {
  let sim: { proc: Proc; url: string }
  let control: SimulatorControl
  const servers: Array<{ proc: Proc; url: string; dir: string; alive: boolean }> = []
  const tenants: Array<SimulatorTenant & { readonly verifyToken: string; readonly productId: string }> = []

  beforeAll(async () => {
    sim = await startSimulatorProcess(["--products", "5"])
    control = new SimulatorControl(sim.url)
    // A blind second product/add would create a second product: the count below would see it.
    await control.setApiSettings({ appProductIdDuplicates: "accept" })
    for (let i = 0; i < TENANTS; i++) {
      const t = await createTenant(control, { products: 2, orders: 0 })
      const products = await listAll(sim.url, t, "product/list")
      tenants.push({ ...t, productId: String(products[0].id) })
    }
    const config = {
      server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
      dataDir: "data",
      eventLog: { mode: "kafka", kafka: { brokers: kafkaBrokers(), topic: TOPIC, partitions: 3, sharedPulls: { partitions: PARTITIONS, handoverSeconds: 1 } } },
      api: { posBaseUrl: `${sim.url}/pos`, vpageBaseUrl: `${sim.url}/vpage` },
      sync: { resources: ["product/list"], intervalSeconds: 2, reconcileSeconds: 3600, overlapSeconds: 5 },
      webhooks: { silenceAlertSeconds: 3600 },
      tenants: tenants.map((t) => ({ appId: t.appId, verifyTokens: [t.verifyToken], businesses: [{ businessId: t.businessId, accessToken: t.accessToken }] }))
    }
    // One after the other: three starting at once on a busy machine can outlast the start's bound.
    for (let i = 0; i < 3; i++) servers.push({ ...(await startServerProcess(config, { OCS_ENCRYPTION_KEY: "77".repeat(32) })), alive: true })
  }, 180_000)

  afterAll(async () => {
    for (const s of servers) if (s.alive) await s.proc.stop("SIGKILL")
    await sim?.proc.stop()
  })

  const admins = () => servers.map((s) => adminClient(() => s.url, ADMIN_KEY))
  const base = (t: SimulatorTenant) => `/admin/tenants/${t.appId}/${t.businessId}`
  const ask = (server: number, t: SimulatorTenant, key: string, kind: string, payload: unknown) =>
    admins()[server]!(`${base(t)}/commands`, { method: "POST", headers: { "idempotency-key": key }, body: JSON.stringify({ kind, payload }) })

  it("one command per key whichever server is asked; the owner sends; a dead owner's commands are taken over; each effect once", async () => {
    const began = Date.now()
    const owned = await eventually("the group's assignment settling on the three servers", async () => {
      const sets = await Promise.all(admins().map(async (a) => new Set<number>((await a("/admin/ownership")).body.partitions ?? [])))
      const all = sets.flatMap((s) => [...s])
      return sets.every((s) => s.size > 0) && all.length === PARTITIONS && new Set(all).size === PARTITIONS ? sets : undefined
    }, 60_000, 250)
    const ownerOf = (t: SimulatorTenant) => owned.findIndex((s) => s.has(partitionOf(t.appId, t.businessId, PARTITIONS)))
    // A quarter of the write answers lost after the effect; bills slow, so one is on the wire at the kill.
    await Promise.all([
      control.addFault({ kind: "lostAnswer", operation: "product/add", probability: 0.25 }),
      control.addFault({ kind: "lostAnswer", operation: "bill/addretail", probability: 0.25 }),
      control.addFault({ kind: "latency", operation: "bill/addretail", ms: 300 })
    ])

    const ids = new Map<string, { tenant: number; kind: string; key: string }>()
    const accepted = (r: { status: number; body: any }, tenant: number, kind: string, key: string) => {
      assert.include([200, 201], r.status, `${kind} ${key}: ${JSON.stringify(r.body)}`)
      ids.set(r.body.id, { tenant, kind, key })
      return r.body.id as string
    }
    const wave = (tag: string, onServers: ReadonlyArray<number>) =>
      Promise.all(tenants.flatMap((t, i) => [
        ...[0, 1, 2, 3].map((j) => {
          const key = `${tag}-p-${i}-${j}`
          return ask(onServers[(i + j) % onServers.length]!, t, key, "product.add", { appProductId: key.toUpperCase(), name: `Áo ${key}`, price: 100_000 + j })
            .then((r) => accepted(r, i, "product.add", key.toUpperCase()))
        }),
        ...[0, 1, 2].map((j) => {
          const key = `${tag}-b-${i}-${j}`
          return ask(onServers[(i + j + 1) % onServers.length]!, t, key, "bill.addRetail", { depotId: 1, products: [{ id: t.productId, quantity: 1 + j }] })
            .then((r) => accepted(r, i, "bill.addRetail", key))
        })
      ]))

    // One key asked of the three servers at once, per tenant: one command, one 201.
    const raced = await Promise.all(tenants.map(async (t, i) => {
      const payload = { depotId: 1, products: [{ id: t.productId, quantity: 7 }] }
      const answers = await Promise.all([0, 1, 2].map((s) => ask(s, t, `race-${i}`, "bill.addRetail", payload)))
      const one = new Set(answers.map((a) => a.body.id))
      assert.strictEqual(one.size, 1, `race-${i}: ${JSON.stringify(answers.map((a) => a.body))}`)
      assert.deepStrictEqual(answers.map((a) => a.status).sort(), [200, 200, 201], `race-${i}: one request created it`)
      return accepted(answers[0]!, i, "bill.addRetail", `race-${i}`)
    }))
    await wave("w1", [0, 1, 2])

    // The key again with another payload, on another server: refused, naming the command.
    const reused = await ask(2, tenants[1]!, "race-1", "bill.addRetail", { depotId: 1, products: [{ id: tenants[1]!.productId, quantity: 8 }] })
    assert.strictEqual(reused.status, 409, JSON.stringify(reused.body))
    assert.strictEqual(reused.body.commandId, raced[1])

    // The owner of tenant 0 dies with one of its attempts on the wire.
    const victim = ownerOf(tenants[0]!)
    const inFlight = await eventually("an attempt of tenant 0 on the wire at its owner", async () => {
      const r = await admins()[victim]!(`${base(tenants[0]!)}/commands?state=sending`)
      return (r.body.items ?? []).length > 0 ? r.body.items.map((c: { id: string }) => c.id) as Array<string> : undefined
    }, 10_000, 20)
    await servers[victim]!.proc.stop("SIGKILL")
    servers[victim]!.alive = false
    const killedAt = Date.now()
    const survivors = [0, 1, 2].filter((s) => s !== victim)
    // More asked of the survivors while the dead owner's tenants have no owner yet.
    await wave("w2", survivors)

    const allFinal = (what: string, on: ReadonlyArray<number>) =>
      eventually(what, async () => {
        const views = await Promise.all(on.map(async (s) => {
          const states = new Map<string, any>()
          for (const t of tenants) for (const c of (await admins()[s]!(`${base(t)}/commands`)).body.items) states.set(c.id, c)
          return states
        }))
        return [...ids.keys()].every((id) => views.every((v) => FINAL.has(v.get(id)?.state))) ? views : undefined
      }, 90_000, 500)
    const sameOutcomes = (views: ReadonlyArray<Map<string, any>>) => {
      // No other command anywhere: a request that lost its key's race is never a command of its own.
      for (const v of views) assert.deepStrictEqual([...v.keys()].sort(), [...ids.keys()].sort())
      for (const id of ids.keys()) {
        const [a, ...others] = views.map((v) => v.get(id))
        assert.strictEqual(a.state, "confirmed", `${id} ${JSON.stringify(ids.get(id))}: ${JSON.stringify(a)}`)
        for (const b of others) assert.deepStrictEqual([b.state, String(b.entityId)], [a.state, String(a.entityId)], `${id}: one outcome on every server`)
      }
    }
    const survived = await allFinal("every command final on both survivors", survivors)
    const settledAfterKillMs = Date.now() - killedAt
    sameOutcomes(survived)

    // The dead server back on its folder: it relays what its outbox still held (records the others
    // see late) and folds the ledger; every server shows one outcome per command, none reopened.
    const back = await restartServerProcess(servers[victim]!.dir, { OCS_ENCRYPTION_KEY: "77".repeat(32) })
    servers[victim] = { ...back, alive: true }
    const finals = await allFinal("every command final on the three servers", [0, 1, 2])
    sameOutcomes(finals)
    // The attempt on the wire at the kill: resolved (never a blind second send: the counts below).
    for (const id of inFlight) assert.strictEqual(finals[0]!.get(id)?.state, "confirmed")

    // Each effect exactly once in the simulator.
    let doubts = 0
    for (const [i, t] of tenants.entries()) {
      const mine = [...ids].filter(([, c]) => c.tenant === i)
      const products = mine.filter(([, c]) => c.kind === "product.add").map(([, c]) => c.key)
      const markers = mine.filter(([, c]) => c.kind === "bill.addRetail").map(([id]) => finals[0]!.get(id).marker as string)
      const p = await control.countEffects(t.businessId, { kind: "product.add", keys: products })
      const b = await control.countEffects(t.businessId, { kind: "bill.addRetail", markers })
      assert.deepStrictEqual(p.keys, Object.fromEntries(products.map((k) => [k, 1])), `tenant ${i}: each product once`)
      assert.deepStrictEqual(b.markers, Object.fromEntries(markers.map((m) => [m, 1])), `tenant ${i}: each bill once`)
      assert.strictEqual(p.total, products.length, `tenant ${i}: no other product added`)
      assert.strictEqual(b.total, markers.length, `tenant ${i}: no other bill added`)
      doubts += mine.filter(([id]) => finals[0]!.get(id).confirmedBy === "readBack").length
    }
    const interrupted = [...ids.keys()].filter((id) => finals[0]!.get(id).reason?.tag === "Interrupted").length
    console.log(
      `shared commands: ${ids.size} commands on 3 servers, ${doubts} resolved by reading back, ${interrupted} interrupted by the kill ` +
        `(${inFlight.length} on the wire), all final on both survivors ${settledAfterKillMs} ms after the kill; ${Date.now() - began} ms in all`
    )
  }, 150_000)
})
