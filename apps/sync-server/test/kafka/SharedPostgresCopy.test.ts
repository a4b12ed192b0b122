/**
 * Several servers, one PostgreSQL copy (docs/architecture.md §4.34, docs/postgres.md): three
 * Kafka-mode server processes with `readModels.store: postgres` share the partitions of the
 * topic (a consumer group), each projecting its own into one schema with the partition's
 * checkpoint in the transaction of the rows. 30 tenants are pulled (100 products each) and
 * changed by the simulator's webhooks (three rounds of renames); one server is SIGKILLed while
 * it projects them and a fourth joins. Afterwards the copy holds every tenant's products exactly as the simulator
 * serves them, each fact was applied at one position only (a trigger of the test records every
 * row the projection writes), every partition's checkpoint is in PostgreSQL, and every live
 * server's admin API reads the shared copy.
 *
 * It runs in the `kafka` project (its broker); PostgreSQL is a server of this file's own
 * (`databaseOfFile` starts one when no project provides it), so under CI=true a broker or a
 * PostgreSQL that cannot start fails the run.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { kafkaBrokers, kafkaUnavailable } from "@ocs/kafka-broker/testing"
import { databaseOfFile, postgresUnavailable } from "@ocs/postgres-server/testing"
import { SimulatorControl } from "@ocs/simulator"
import { PostgresStore } from "@ocs/read-models/postgres"
import { Effect, Exit, Scope } from "effect"
import { eventually, type Proc, startServerProcess, startSimulatorProcess } from "../processes.ts"
import { createTenant, listAll, serverAgainst } from "../simulatorReads.ts"

const database = databaseOfFile()
const ADMIN_KEY = "shared-copy-admin-key-0001"
const TOPIC = `ocs-shared-copy-${Date.now()}`
const SCHEMA = "ocs_shared"
const TENANTS = 30
const PRODUCTS = 100
const PARTITIONS = 6
const ENV = { OCS_ENCRYPTION_KEY: "69".repeat(32) }
/**
 * How long a server may take to listen. Servers starting together on a fresh clone compile the
 * same sources at once (Node's compile cache is cold, and a SIGKILLed server never writes it):
 * measured under a load of 16-28 on 2 cores, each had used 8.5-9 s of CPU when it listened,
 * 76-104 s after it was spawned; progressing, only starved. On a quiet machine a few seconds.
 */
const READY_MS = 150_000

type Tenant = Awaited<ReturnType<typeof createTenant>>

describe.skipIf(kafkaUnavailable() || postgresUnavailable())("several Kafka-mode servers share one PostgreSQL copy", () => {
  let sim: { proc: Proc; url: string }
  let control: SimulatorControl
  const servers: Array<{ proc: Proc; url: string; alive: boolean }> = []
  const tenants: Array<Tenant> = []
  const scope = Effect.runSync(Scope.make())
  let copy: PostgresStore.PostgresStore
  let config: unknown
  const startServer = () => startServerProcess(config, ENV, READY_MS)
  const sql = <Row extends object>(text: string, values: ReadonlyArray<unknown> = []) => Effect.runPromise(copy.query<Row>(text, values))

  beforeAll(async () => {
    sim = await startSimulatorProcess()
    control = new SimulatorControl(sim.url)
    for (let i = 0; i < TENANTS; i++) tenants.push(await createTenant(control, { products: PRODUCTS, orders: 0 }))
    // The schema made first, with a trigger that records every product row the projection writes.
    copy = await Effect.runPromise(Scope.provide(PostgresStore.make({ url: database(), schema: SCHEMA, pool: 2, detectChanges: false }), scope))
    await sql(`CREATE TABLE ${SCHEMA}.written (event_id text NOT NULL, "offset" bigint NOT NULL, id text NOT NULL)`)
    await sql(`CREATE FUNCTION ${SCHEMA}.note_written() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO ${SCHEMA}.written VALUES (NEW.last_event_id, NEW.last_offset, NEW.id); RETURN NEW; END $$`)
    await sql(`CREATE TRIGGER note_written AFTER INSERT OR UPDATE ON ${SCHEMA}.products FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.note_written()`)
    config = {
      ...serverAgainst(sim.url, ADMIN_KEY, ["product/list"]),
      eventLog: { mode: "kafka", kafka: { brokers: kafkaBrokers(), topic: TOPIC, partitions: PARTITIONS, sharedPulls: { partitions: 12, handoverSeconds: 1 } } },
      sync: { resources: ["product"], intervalSeconds: 3600, reconcileSeconds: 86_400, overlapSeconds: 5, pageSize: 100 },
      webhooks: { silenceAlertSeconds: 3600 },
      readModels: { store: "postgres", postgres: { url: database(), schema: SCHEMA, pool: 2 } },
      tenants: tenants.map((t) => ({ appId: t.appId, verifyTokens: [t.verifyToken], businesses: [{ businessId: t.businessId, accessToken: t.accessToken }] }))
    }
    const started = await Promise.all(Array.from({ length: 3 }, startServer))
    for (const s of started) servers.push({ ...s, alive: true })
  }, 240_000)

  afterAll(async () => {
    for (const s of servers) if (s.alive) await s.proc.stop("SIGKILL")
    await sim?.proc.stop()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  /**
   * What a tenant's copy holds, for a failure: live, stale (another name) and tombstoned rows of
   * the simulator's products, those absent, and why the first tombstone is one (its `record`), so
   * a loss is told from a deletion (docs/architecture.md §4.14: a full pass's completion).
   */
  const why = async (t: Tenant) => {
    const want = new Map((await listAll(sim.url, t, "product/list")).map((p) => [String(p.id), JSON.stringify([p.name, p.code ?? null])]))
    const rows = await sql<{ id: string; name: string | null; code: string | null; deleted: number; record: string; last_offset: string }>(
      `SELECT id, name, code, deleted, record, last_offset FROM ${SCHEMA}.products WHERE app_id = $1 AND business_id = $2`, [t.appId, t.businessId])
    const live = rows.filter((r) => Number(r.deleted) === 0)
    const dead = rows.filter((r) => Number(r.deleted) !== 0)
    const stale = live.filter((r) => want.get(r.id) !== JSON.stringify([r.name, r.code])).length
    const absent = [...want.keys()].filter((id) => !rows.some((r) => r.id === id)).length
    const first = dead[0]
    return `${t.businessId}: ${live.length}/${want.size} live (${stale} stale), ${dead.length} tombstoned, ${absent} absent` +
      (first === undefined ? "" : ` (tombstone at ${first.last_offset}: ${first.record.slice(0, 200)})`)
  }

  const admin = async (server: { url: string }, path: string) =>
    (await (await fetch(`${server.url}${path}`, { headers: { "x-admin-key": ADMIN_KEY } })).json()) as any

  it("each record projected once by the partition's owner; a SIGKILLed owner's partitions resume from PostgreSQL", async () => {
    const started = Date.now()
    // Webhooks: each app's callback on a server that stays up.
    for (const [i, t] of tenants.entries()) {
      const r = await control.enableWebhooks(t.appId, { callbackUrl: `${servers[i % 2 === 0 ? 0 : 2]!.url}/webhooks/${t.appId}`, verifyToken: t.verifyToken })
      assert.isTrue(r.enabled)
    }
    // Every tenant's pull projected, then changes the simulator sends as webhooks: three rounds
    // of renames; the victim, projecting its partitions, is SIGKILLed after the first.
    await eventually("every pulled product in the copy", async () => {
      const [row] = await sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${SCHEMA}.products`)
      return row!.n >= TENANTS * PRODUCTS ? true : undefined
    }, 60_000, 200)
    const victim = servers[1]!
    const renamed: Array<{ t: Tenant; id: string; name: string }> = []
    const ids = new Map<Tenant, Array<string>>()
    for (const t of tenants) ids.set(t, (await listAll(sim.url, t, "product/list")).map((p) => String(p.id)))
    let killedAt = 0
    // The fourth server starts while the webhooks of the later rounds arrive.
    let fourth: ReturnType<typeof startServer> | undefined
    for (let round = 0; round < 3; round++) {
      for (const [i, t] of tenants.entries()) {
        const id = ids.get(t)![(i * 7 + round * 13) % PRODUCTS]!
        const name = `renamed ${i} in round ${round}`
        await control.updateProduct(t.businessId, id, { name })
        renamed.push({ t, id, name })
      }
      if (round === 0) {
        await Effect.runPromise(Effect.sleep(300))
        victim.alive = false
        await victim.proc.stop("SIGKILL")
        killedAt = Date.now()
        fourth = startServer()
        fourth.catch(() => {}) // awaited below
      }
    }
    servers.push({ ...(await fourth!), alive: true })
    await control.drainDeliveries(30_000)

    // The copy equals the simulator's data, row by row, for every tenant.
    const expected = new Map<Tenant, Map<string, string>>()
    for (const t of tenants) expected.set(t, new Map((await listAll(sim.url, t, "product/list")).map((p) => [String(p.id), JSON.stringify([p.name, p.code ?? null])])))
    let wrong: Array<Tenant> = []
    await eventually("every tenant's products in PostgreSQL as the simulator serves them", async () => {
      wrong = []
      for (const t of tenants) {
        const rows = await sql<{ id: string; name: string; code: string | null }>(
          `SELECT id, name, code FROM ${SCHEMA}.products WHERE app_id = $1 AND business_id = $2 AND deleted = 0`, [t.appId, t.businessId])
        const want = expected.get(t)!
        const differ = rows.length !== want.size || rows.some((r) => want.get(r.id) !== JSON.stringify([r.name, r.code]))
        if (differ) wrong.push(t)
      }
      return wrong.length === 0 ? true : undefined
    }, 60_000, 500).catch(async (e) => {
      throw new Error(`${String(e)}; ${wrong.length} tenants differ: ${(await Promise.all(wrong.slice(0, 5).map(why))).join("; ")}`)
    })
    const settled = Date.now()
    // The webhooks' changes are in it (the simulator serves the newest names).
    const newest = new Map(renamed.map((r) => [`${r.t.businessId}/${r.id}`, r]))
    for (const r of newest.values()) assert.strictEqual(JSON.parse(expected.get(r.t)!.get(r.id)!)[0], r.name)

    // Each fact written at one position only: no record applied twice, by one server or two.
    const twice = await sql<{ event_id: string; id: string; n: number }>(
      `SELECT event_id, id, count(DISTINCT "offset")::int AS n FROM ${SCHEMA}.written GROUP BY event_id, id HAVING count(DISTINCT "offset") > 1 LIMIT 5`)
    assert.deepStrictEqual(twice, [], "a fact was projected at two positions")
    const writes = await sql<{ n: number; distinct: number }>(`SELECT count(*)::int AS n, count(DISTINCT ("offset", id))::int AS distinct FROM ${SCHEMA}.written`)
    assert.strictEqual(writes[0]!.n, writes[0]!.distinct, "a record's row was written twice")
    // Every partition's checkpoint is in PostgreSQL (one row each), and no single-consumer row.
    const consumers = await sql<{ consumer: string }>(`SELECT consumer FROM ${SCHEMA}.consumer_checkpoints ORDER BY consumer`)
    assert.deepStrictEqual(consumers.map((r) => r.consumer), Array.from({ length: PARTITIONS }, (_, p) => `read-models-postgres@${p}`))

    // Every live server's admin API reads the shared copy.
    const t0 = tenants[0]!
    for (const server of servers.filter((s) => s.alive)) {
      const last = newest.get(`${t0.businessId}/${renamed[0]!.id}`)!
      const one = await admin(server, `/admin/tenants/${t0.appId}/${t0.businessId}/products/${last.id}`)
      assert.strictEqual(one.name, last.name, `server ${server.url}`)
    }
    console.log(`shared copy: ${writes[0]!.n} product rows written by ${servers.length} servers (one killed); copy equal ${((settled - killedAt) / 1000).toFixed(1)} s after the kill, ${((settled - started) / 1000).toFixed(1)} s in all`)
  }, 120_000)
})
