/**
 * A command the service answered as applied whose effect never shows (docs/architecture.md §4.31,
 * "Confirmation"), on a real server process and the simulator: with `commands.seenWithinSeconds`
 * short, the targeted read decides, and the command ends flagged `notSeen` with what the read
 * saw, at the admin API (`flagged` filter), in /metrics and in `ocs-replay commands`; a normal
 * command of the same run ends `seen`.
 */
import { SimulatorControl } from "@ocs/simulator"
import { runNode } from "@ocs/testkit/Processes"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { adminClient, eventually, fullSyncsDone, type Proc, startServerProcess, startSimulatorProcess, stopServerAndSimulator } from "./processes.ts"

const ADMIN_KEY = "command-not-seen-admin-key-0123456789"
const SEEN_WITHIN_SECONDS = 1
const REPLAY_BIN = fileURLToPath(new URL("../../replay/src/bin.ts", import.meta.url))

let sim: { readonly proc: Proc; readonly url: string }
let server: { readonly proc: Proc; readonly url: string; readonly dir: string }
let admin: ReturnType<typeof adminClient>
let control: SimulatorControl
let base: string
let tenantKey: string
let businessId: string

beforeAll(async () => {
  sim = await startSimulatorProcess(["--products", "100"])
  control = new SimulatorControl(sim.url)
  const t = await control.createTenant({ products: 100, orders: 0 })
  server = await startServerProcess({
    server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
    dataDir: "data",
    api: { posBaseUrl: `${sim.url}/pos`, vpageBaseUrl: `${sim.url}/vpage` },
    // No pull during the run: the copy knows only what it knew at start, so `seen` is the targeted read's.
    sync: { resources: ["product/list"], intervalSeconds: 3600, reconcileSeconds: 3600, overlapSeconds: 5 },
    webhooks: { silenceAlertSeconds: 3600 },
    commands: { seenWithinSeconds: SEEN_WITHIN_SECONDS },
    tenants: [{ appId: t.app.appId, verifyTokens: [t.app.verifyToken], businesses: [{ businessId: t.business.businessId, accessToken: t.token.accessToken }] }]
  }, { OCS_ENCRYPTION_KEY: "44".repeat(32) })
  businessId = String(t.business.businessId)
  tenantKey = `${t.app.appId}:${businessId}`
  base = `/admin/tenants/${t.app.appId}/${businessId}`
  admin = adminClient(() => server.url, ADMIN_KEY)
  // The first full sync done before any command: what the copy holds afterwards is fixed.
  await fullSyncsDone(admin, 1, "the tenant's products synced")
}, 60_000)

afterAll(() => stopServerAndSimulator(server, sim))

const ask = (key: string, payload: unknown) =>
  admin(`${base}/commands`, { method: "POST", headers: { "idempotency-key": key }, body: JSON.stringify({ kind: "product.add", payload }) })

const decided = (id: string) =>
  eventually(`command ${id} seen or flagged`, async () => {
    const c = (await admin(`${base}/commands/${id}`)).body
    return c.seen === undefined ? undefined : c
  }, 20_000, 100)

describe("a command answered as applied whose effect never shows", () => {
  it("ends flagged notSeen with the read's evidence (admin API, /metrics, ocs-replay); a normal one ends seen", async () => {
    // The service answers the first product/add with an id no list shows; the effect is applied under its own.
    await control.addFault({ kind: "unlistedId", operation: "product/add", businessId, count: 1 })
    const lost = await ask("not-seen-1", { appProductId: "NOT-SEEN-1", name: "Khăn rằn", price: 85_000 })
    assert.strictEqual(lost.status, 201, JSON.stringify(lost.body))
    const answered = await eventually("the first command confirmed", async () => {
      const c = (await admin(`${base}/commands/${lost.body.id}`)).body
      return c.state === "confirmed" ? c : undefined
    }, 10_000, 50)
    // Asked once the first call went out, so the two never share a coalesced call.
    const normal = await ask("seen-1", { appProductId: "SEEN-1", name: "Nón lá", price: 45_000 })
    assert.strictEqual(normal.status, 201, JSON.stringify(normal.body))

    const [flagged, seen] = await Promise.all([decided(lost.body.id), decided(normal.body.id)])
    assert.deepStrictEqual([flagged.state, flagged.confirmedBy, flagged.seen], ["confirmed", "answer", "flagged"])
    assert.deepStrictEqual([seen.state, seen.confirmedBy, seen.seen], ["confirmed", "answer", "readBack"])
    // The service's answer named an id it never lists; the real effect exists once, under another.
    const effects = (await control.effects(businessId, "product.add")).effects
    const real = effects.filter((e) => e.key === "NOT-SEEN-1")
    assert.strictEqual(real.length, 1)
    assert.notStrictEqual(String(answered.entityId), real[0]!.id)
    assert.isAtLeast(Number(answered.entityId), 9_000_000_000_001)
    // Not decided before the bound: the copy was looked at for it first.
    assert.isAtLeast(flagged.updatedAt - answered.updatedAt, SEEN_WITHIN_SECONDS * 1000 - 50)

    // The evidence: the targeted read by the answered id, and what it found.
    const ledger = (await admin(`${base}/commands/${lost.body.id}/ledger`)).body
    const notSeen = ledger.transitions.find((t: { state: string }) => t.state === "notSeen")
    assert.strictEqual(notSeen.reason.tag, "NotSeen")
    assert.include(notSeen.evidence, `not in the copy after ${SEEN_WITHIN_SECONDS * 1000} ms`)
    assert.include(notSeen.evidence, `product/list {"ids":[${answered.entityId}]}: not shown`)
    const seenStep = (await admin(`${base}/commands/${normal.body.id}/ledger`)).body.transitions.find((t: { state: string }) => t.state === "seen")
    assert.include(seenStep.evidence, ": shown")

    // The admin API's flagged filter and counts.
    const onlyFlagged = (await admin(`${base}/commands?flagged=true`)).body
    assert.deepStrictEqual(onlyFlagged.items.map((c: { id: string }) => c.id), [lost.body.id])
    assert.strictEqual(onlyFlagged.counts.flagged, 1)
    assert.deepStrictEqual((await admin(`${base}/commands?flagged=false`)).body.items.map((c: { id: string }) => c.id), [normal.body.id])
    // /metrics.
    const metrics = await (await fetch(`${server.url}/metrics`)).text()
    assert.match(metrics, /^ocs_commands_flagged 1$/m)
    assert.match(metrics, /ocs_commands\{kind="product\.add",state="confirmed"\} 2\b/)

    // ocs-replay commands, from the server's log as it stands.
    const log = Path.join(server.dir, "data", "events.sqlite")
    assert.isTrue(Fs.existsSync(log), log)
    const replay = await runNode([REPLAY_BIN, "commands", "--log", log, "--tenant", tenantKey, "--format", "ndjson"])
    assert.strictEqual(replay.code, 0, replay.stderr)
    const lines = replay.stdout.trim().split("\n").map((l) => JSON.parse(l) as { id: string; seen?: string })
    assert.deepStrictEqual(Object.fromEntries(lines.map((l) => [l.id, l.seen])), { [lost.body.id]: "flagged", [normal.body.id]: "readBack" })
  }, 30_000)
})
