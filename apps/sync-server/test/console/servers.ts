/**
 * The servers of the console suite, started as `./ocs start` starts them: the simulator as
 * its own process, and the sync server's demo (`--demo`: the demo tenant, webhooks on, a
 * little activity) on top of a configuration that adds what the tests need: a known admin
 * key and the order-forwarder plugin, pointed at a receiver the test can make fail.
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Path from "node:path"
import { SimulatorControl } from "@ocs/simulator"
import { startListening, startSimulatorProcess, tempDir } from "@ocs/testkit/Processes"
import { nodeEnv, nodeFlags } from "../../src/ops/nodeFlags.ts"
import { serverBin } from "../processes.ts"

export const ADMIN_KEY = "console-admin-key-0123456789"

export const startServers = async () => {
  // The forwarder's target: answers 500 until `receiver.failing` is turned off.
  const receiver = { failing: true, received: 0, server: Http.createServer() }
  receiver.server.on("request", (req: Http.IncomingMessage, res: Http.ServerResponse) => {
    req.resume()
    req.on("end", () => {
      receiver.received++
      res.writeHead(receiver.failing ? 500 : 200).end()
    })
  })
  await new Promise<void>((r) => receiver.server.listen(0, "127.0.0.1", r))
  const sim = await startSimulatorProcess(["--products", "300"])
  const control = new SimulatorControl(sim.url)
  const demo = await control.demo()
  const dir = tempDir("ocs-console-")
  const file = Path.join(dir, "ocs.json")
  Fs.writeFileSync(file, JSON.stringify({
    server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
    plugins: [{
      use: "@ocs/plugin-order-forwarder",
      config: { url: `http://127.0.0.1:${(receiver.server.address() as Net.AddressInfo).port}/orders`, secret: "console-forwarder-secret" }
    }]
  }))
  const simPort = new URL(sim.url).port
  const server = await startListening(
    [...nodeFlags, serverBin, "--demo", "--config", file, "--data-dir", Path.join(dir, "data"), "--simulator-port", simPort],
    { ...nodeEnv, OCS_ENCRYPTION_KEY: "22".repeat(32) }
  )
  const servers = {
    sim,
    control,
    demo: { appId: String(demo.appId), businessId: String(demo.businessId) },
    server,
    receiver,
    stop: async () => {
      const code = await server.proc.stop("SIGTERM")
      await sim.proc.stop("SIGTERM")
      receiver.server.close()
      Fs.rmSync(dir, { recursive: true, force: true })
      return code
    }
  }
  // The demo connects its business through the grant flow once the server listens (the
  // callback comes back to it): the suites start when the demo tenant is there.
  await adminWhen(servers, "/admin/tenants", (r) => r.status === 200 && r.body.tenants.some((t: { businessId: string }) => String(t.businessId) === servers.demo.businessId))
  return servers
}

export type Servers = Awaited<ReturnType<typeof startServers>>

/** A call of the JSON admin API with the key header. */
export const admin = async (servers: Servers, path: string, method = "GET") => {
  const r = await fetch(`${servers.server.url}${path}`, { method, headers: { "x-admin-key": ADMIN_KEY } })
  return { status: r.status, body: JSON.parse(await r.text()) }
}

/**
 * The same call repeated until `ready` holds for its answer: the demo syncs in the
 * background, so a test that needs synced rows waits for them instead of assuming them.
 */
export const adminWhen = async (
  servers: Servers,
  path: string,
  ready: (r: { status: number; body: any }) => boolean,
  timeoutMs = 60_000
) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const r = await admin(servers, path)
    if (ready(r)) return r
    if (Date.now() > deadline) throw new Error(`${path} not ready after ${timeoutMs} ms: ${JSON.stringify(r.body).slice(0, 300)}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** Asks for a command over the admin API (the write path, docs/architecture.md §4.31), with its idempotency key. */
export const askCommand = async (servers: Servers, key: string, kind: string, payload: unknown) => {
  const r = await fetch(`${servers.server.url}/admin/tenants/${servers.demo.appId}/${servers.demo.businessId}/commands`, {
    method: "POST",
    headers: { "x-admin-key": ADMIN_KEY, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({ kind, payload })
  })
  const body = JSON.parse(await r.text())
  if (r.status !== 201) throw new Error(`command ${key}: ${r.status} ${JSON.stringify(body)}`)
  return body as { readonly id: string; readonly state: string }
}
