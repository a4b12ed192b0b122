/**
 * A plugin written outside the monorepo, as packages/plugin-sdk/README.md says ("A plugin in
 * its own folder or repository"): the SDK packed with `./ocs pack`, the plugin's package.json
 * and index.ts taken from the README, installed offline in a folder of the OS temp dir, loaded by
 * a running server; then the README's dry run over the stopped server's data. The server and the
 * dry run see each order added once, whether its webhook or a pull told the server first.
 */
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { SimulatorControl } from "@ocs/simulator"
import { runNode } from "@ocs/testkit/Processes"
import { eventually, parseLoose, type Proc, startServerProcess, startSimulatorProcess } from "./processes.ts"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const appDir = fileURLToPath(new URL("../", import.meta.url))
const ADMIN_KEY = "third-party-admin-key-0123456789"

/** The code block that follows `<!-- name -->` in the SDK's README. */
const fromReadme = (name: string): string => {
  const readme = Fs.readFileSync(Path.join(root, "packages/plugin-sdk/README.md"), "utf8")
  const at = readme.indexOf(`<!-- ${name} -->`)
  assert.isAbove(at, -1, `the README shows ${name}`)
  const block = /```[a-z]*\n([\s\S]*?)```/.exec(readme.slice(at))
  return block![1]!
}

/** The package manager this checkout runs (`./ocs` runs pnpm), else pnpm from PATH. */
const pnpm = (args: ReadonlyArray<string>, cwd: string) => {
  const execPath = process.env["npm_execpath"]
  const [command, first] = execPath !== undefined && /pnpm\.c?js$/.test(execPath) ? [process.execPath, [execPath]] : ["pnpm", []]
  return ChildProcess.execFileSync(command, [...first, ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
}

const pluginDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "ocs-third-party-"))
const plugin = Path.join(pluginDir, "order-total")
let sim: { proc: Proc; url: string }
let server: { proc: Proc; url: string; dir: string } | undefined
let receiver: Http.Server
const received: Array<{ eventId: string; orderId: string }> = []
let receiverUrl = ""

beforeAll(async () => {
  // The plugin's folder, as its author would make it.
  Fs.mkdirSync(plugin)
  Fs.writeFileSync(Path.join(plugin, "package.json"), fromReadme("order-total/package.json"))
  Fs.writeFileSync(Path.join(plugin, "index.ts"), fromReadme("order-total/index.ts"))
  // `./ocs pack ../order-total/vendor` runs this script with the checkout's Node.
  ChildProcess.execFileSync(process.execPath, [Path.join(root, "tooling/scripts/pack-sdk.ts"), Path.join(plugin, "vendor")], { stdio: "ignore" })
  pnpm(["install", "--offline"], plugin)

  receiver = Http.createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8").on("data", (s: string) => (body += s)).on("end", () => {
      received.push(JSON.parse(body) as { eventId: string; orderId: string })
      res.end("ok")
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/orders`
  sim = await startSimulatorProcess(["--rate-window", "3"])
}, 300_000)

afterAll(async () => {
  await server?.proc.stop("SIGTERM")
  await sim?.proc.stop("SIGTERM")
  await new Promise((resolve) => receiver?.close(resolve))
  Fs.rmSync(pluginDir, { recursive: true, force: true })
  if (server !== undefined) Fs.rmSync(server.dir, { recursive: true, force: true })
})

describe("a plugin in its own folder", () => {
  it("installs without the monorepo and without SQLite or Kafka, runs in the server, and its dry run agrees", async () => {
    const installed = Fs.readdirSync(Path.join(plugin, "node_modules", ".pnpm"))
    assert.deepStrictEqual(installed.filter((d) => /better-sqlite3|kafkajs/.test(d)), [], "no SQLite driver or Kafka client installed")

    const control = new SimulatorControl(sim.url)
    const t = await control.createTenant({ products: 3, orders: 2, historyDays: 10 })
    const tenant = { appId: t.app.appId, businessId: t.business.businessId }
    server = await startServerProcess({
      server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
      dataDir: "data",
      api: { posBaseUrl: `${sim.url}/pos`, vpageBaseUrl: `${sim.url}/vpage` },
      sync: { resources: ["order/list"], intervalSeconds: 3600, reconcileSeconds: 3600, overlapSeconds: 5, horizonDays: 120, gapFillSilenceSeconds: 3600 },
      webhooks: { silenceAlertSeconds: 3600 },
      plugins: [{ use: Path.join(plugin, "index.ts"), config: { url: receiverUrl } }],
      tenants: [{ appId: tenant.appId, verifyTokens: [t.app.verifyToken], businesses: [{ businessId: tenant.businessId, accessToken: t.token.accessToken }] }]
    }, { OCS_ENCRYPTION_KEY: "33".repeat(32) })
    const admin = async (path: string, init: RequestInit = {}) => {
      const r = await fetch(`${server!.url}${path}`, { ...init, headers: { "x-admin-key": ADMIN_KEY, ...init.headers } })
      return parseLoose(await r.text())
    }
    const settled = async (what: string) => {
      let quiet = 0
      await eventually(what, async () => {
        const ready = parseLoose(await fetch(`${server!.url}/readyz`).then((r) => r.text()))
        const p = (await admin("/admin/plugins")).plugins[0]
        quiet = ready.lag !== null && ready.lag.records === 0 && p.lag === 0 ? quiet + 1 : 0
        return quiet >= 3 ? true : undefined
      }, 60_000, 300)
    }

    // The first full sync is a baseline: the orders already there are no change.
    await eventually("the first full sync", async () => {
      const s = (await admin("/admin/sync")).sync
      return s.length > 0 && s.every((x: any) => x.fullCompletedAt !== null) ? true : undefined
    }, 60_000, 300)
    const enabled = await control.enableWebhooks(tenant.appId, { callbackUrl: `${server.url}/webhooks/${tenant.appId}`, verifyToken: t.app.verifyToken })
    assert.isTrue(enabled.enabled)
    await settled("the projection after webhooks were enabled")

    // Orders added: each told twice, by its webhook and then by a pull.
    const products = await fetch(`${sim.url}/pos/v3.0/product/list?appId=${tenant.appId}&businessId=${tenant.businessId}`, {
      method: "POST",
      headers: { authorization: t.token.accessToken, "content-type": "application/json" },
      body: `{"filters":{},"paginator":{"size":10}}`
    }).then((r) => r.text()).then(parseLoose)
    const productId = String(products.data[0].id)
    const added: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const r = (await control.addOrder(tenant.businessId, { customerName: `third party ${i}`, products: [{ productId, quantity: 1 + i }] })) as any
      added.push(String(r.order.info.id))
    }
    await control.drainDeliveries(30_000)
    await settled("the webhooks' projection")
    await admin(`/admin/tenants/${tenant.appId}/${tenant.businessId}/sync?full=true`, { method: "POST" })
    await settled("the pull's projection")

    // The server: one event per added order (delivery is at least once: distinct event ids).
    const byOrder = new Map<string, Set<string>>()
    for (const r of received) byOrder.set(r.orderId, (byOrder.get(r.orderId) ?? new Set()).add(r.eventId))
    assert.deepStrictEqual([...byOrder.keys()].sort(), [...added].sort())
    for (const [order, ids] of byOrder) assert.strictEqual(ids.size, 1, `order ${order}: one event`)

    // The README's dry run over the stopped server's data.
    const dataDir = Path.join(server.dir, "data")
    assert.strictEqual(await server.proc.stop("SIGTERM"), 0)
    const scriptDir = Fs.mkdtempSync(Path.join(appDir, ".dry-run-"))
    try {
      Fs.writeFileSync(Path.join(scriptDir, "dry-run.mjs"), fromReadme("dry-run.mjs"))
      const run = await runNode([Path.join(scriptDir, "dry-run.mjs"), Path.join(plugin, "index.ts"), dataDir, JSON.stringify({ url: receiverUrl })])
      assert.strictEqual(run.code, 0, run.stderr)
      const report = JSON.parse(run.stdout) as { totals: { events: number; httpRequests: number }; events: Array<{ eventId: string; tag: string; effects: Array<{ _tag: string; body?: string }> }> }
      const dryOrders = report.events.map((e) => (JSON.parse(e.effects.find((f) => f._tag === "HttpRequest")!.body!) as { orderId: string }).orderId)
      assert.deepStrictEqual([...dryOrders].sort(), [...added].sort(), "the dry run sees each added order once")
      assert.deepStrictEqual(report.events.map((e) => e.eventId).sort(), received.map((r) => r.eventId).filter((id, i, all) => all.indexOf(id) === i).sort())
      assert.strictEqual(report.totals.httpRequests, added.length)
    } finally {
      Fs.rmSync(scriptDir, { recursive: true, force: true })
    }
    assert.strictEqual(received.filter((r, i, all) => all.findIndex((x) => x.eventId === r.eventId) === i).length, added.length, "the dry run sent nothing")
  })
})
