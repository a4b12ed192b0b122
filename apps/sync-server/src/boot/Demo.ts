/**
 * The main job with no configuration: the bundled simulator (started as its own process
 * unless one already answers on its port), a demo tenant, webhooks enabled towards this
 * server, a little activity in the simulator so that webhooks flow, and a progress line.
 *
 * The demo business connects itself the way any business does (docs/architecture.md §4.32):
 * the demo application is registered with its secret key and this server's public URL, and
 * the demo walks the grant over real HTTP (connect link, the simulator's grant page, the form
 * posted as served, the callback), so no token is pasted.
 */
import { Data, Effect, Option, Redacted, Schedule, Scope } from "effect"
import * as ChildProcess from "node:child_process"
import * as Crypto from "node:crypto"
import { fileURLToPath } from "node:url"
import { SimulatorControl, type SimulatorControlTypes } from "@ocs/simulator"
import { ReadModels } from "@ocs/read-models"
import { Ingestion } from "@ocs/ingestion"
import { RateLimiter } from "@ocs/transport"
import { SyncState } from "@ocs/sync"
import { Connect } from "@ocs/tenant-store"
import { TenantRegistry } from "@ocs/tenant-store/TenantRegistry"
import type { Config } from "./Config.ts"
import type { RunningServer } from "../http/Server.ts"

export type DemoInfo = SimulatorControlTypes.Demo

/** The simulator's demo tenant; ids come back as exact decimal strings. */
const fetchDemo = (url: string) => Effect.tryPromise({ try: () => new SimulatorControl(url).demo(), catch: (e) => e })

/** The simulator on `port`: an existing one, or a child process we start (and stop with the scope). */
export const simulator = (host: string, port: number) =>
  Effect.gen(function*() {
    const url = `http://${host}:${port}`
    const existing = yield* Effect.option(fetchDemo(url))
    if (Option.isSome(existing)) {
      yield* Effect.logInfo(`using the simulator already running at ${url}`)
      return { url, demo: existing.value, started: false }
    }
    const bin = fileURLToPath(import.meta.resolve("@ocs/simulator/bin"))
    yield* Effect.acquireRelease(
      Effect.sync(() =>
        ChildProcess.spawn(process.execPath, [bin, "--host", host, "--port", String(port), "--products", "2000"], {
          stdio: ["ignore", "ignore", "inherit"]
        })
      ),
      (child) => Effect.sync(() => void child.kill("SIGTERM"))
    )
    const demo = yield* fetchDemo(url).pipe(Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 100 }))
    return { url, demo, started: true }
  })

/** A host a browser on this machine reaches the server at: a wildcard address is not one. */
const reachable = (host: string) => (host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host)

/** The configuration of the demo: the defaults, the simulator's addresses and its tenant. */
export const demoConfig = (base: Config, demo: DemoInfo): Config => ({
  ...base,
  server: { ...base.server, adminKey: base.server.adminKey ?? `demo-admin-${Crypto.randomBytes(12).toString("hex")}` },
  api: { ...base.api, posBaseUrl: demo.posBaseUrl, vpageBaseUrl: demo.vpageBaseUrl },
  sync: { ...base.sync, intervalSeconds: Math.min(base.sync.intervalSeconds, 15) },
  tenants: [
    ...(base.tenants ?? []),
    {
      appId: demo.appId,
      verifyTokens: [demo.verifyToken],
      // The demo app can connect more businesses of the simulator through the grant flow
      // (docs/architecture.md §4.32); its link needs the server's port, known here unless it is 0.
      ...(demo.secretKey === undefined ? {} : { secretKey: demo.secretKey }),
      ...(base.server.port === 0 ? {} : { publicUrl: `${base.server.tls === undefined ? "http" : "https"}://${reachable(base.server.host)}:${base.server.port}` }),
      // With a secret key the demo business connects itself through the grant (`connect`);
      // a simulator without one (an older build) still gets its token pasted.
      ...(demo.secretKey === undefined
        ? { businesses: [{ businessId: demo.businessId, accessToken: demo.accessToken, expiresAt: new Date(Date.now() + 365 * 24 * 3600 * 1000).toISOString() }] }
        : {})
    }
  ]
})

export class DemoConnectError extends Data.TaggedError("DemoConnectError")<{ readonly message: string }> {}

/** A form as a browser would post it untouched: its action, hidden and text fields, checked boxes. */
export const formOf = (html: string, base: string): { readonly action: string; readonly fields: URLSearchParams } | undefined => {
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html)
  if (form === null) return undefined
  const attr = (tag: string, name: string) => {
    const m = new RegExp(`\\b${name}\\s*=\\s*"([^"]*)"`, "i").exec(tag)
    return m === null ? undefined : m[1]!.replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")
  }
  if ((attr(form[1]!, "method") ?? "get").toLowerCase() !== "post") return undefined
  const fields = new URLSearchParams()
  for (const input of form[2]!.match(/<input\b[^>]*>/gi) ?? []) {
    const name = attr(input, "name")
    if (name === undefined) continue
    const type = (attr(input, "type") ?? "text").toLowerCase()
    if ((type === "checkbox" || type === "radio") && !/\schecked\b/i.test(input)) continue
    fields.append(name, attr(input, "value") ?? (type === "checkbox" ? "on" : ""))
  }
  return { action: new URL(attr(form[1]!, "action") ?? base, base).toString(), fields }
}

const step = (what: string, url: string, init: RequestInit = {}) =>
  Effect.tryPromise({
    try: async () => {
      const r = await fetch(url, { ...init, redirect: "manual", signal: AbortSignal.timeout(15_000) })
      return { status: r.status, location: r.headers.get("location"), body: await r.text() }
    },
    catch: (e) => new DemoConnectError({ message: `${what}: ${e instanceof Error ? e.message : String(e)}` })
  })

const redirect = (what: string, r: { readonly status: number; readonly location: string | null; readonly body: string }, base: string) =>
  r.status === 302 && r.location !== null
    ? Effect.succeed(new URL(r.location, base).toString())
    : Effect.fail(new DemoConnectError({ message: `${what} answered ${r.status} instead of a redirect: ${r.body.slice(0, 200)}` }))

/**
 * Connects the demo business through the grant flow, as a person with a browser would: the
 * application gets this server's public URL when the configuration could not name it (port 0),
 * then the connect link, the simulator's grant page (its form posted as served: the demo
 * business, every permission and depot), the callback. Each start grants again; the service
 * keeps the previous token 15 minutes, and a grant lifts a hold left by a token the simulator
 * no longer knows (a simulator restarted beside a kept data folder).
 */
export const connect = (demo: DemoInfo, server: RunningServer) =>
  Effect.gen(function*() {
    const store = yield* TenantRegistry
    const app = yield* store.app(demo.appId)
    if (Option.isNone(app) || app.value.secretKey === null) return false
    let publicUrl = app.value.publicUrl
    if (publicUrl === null) {
      const url = new URL(server.url)
      publicUrl = `${url.protocol}//${reachable(url.hostname.replace(/^\[|\]$/g, ""))}:${server.port}`
      yield* store.upsertApp(demo.appId, app.value.verifyTokens.map(Redacted.value), app.value.enabled, { publicUrl })
    }
    const link = Connect.link(publicUrl, demo.appId)
    const grantPage = yield* redirect("the connect link", yield* step("the connect link", link), link)
    const served = yield* step("the grant page", grantPage)
    const form = served.status === 200 ? formOf(served.body, grantPage) : undefined
    if (form === undefined) {
      return yield* new DemoConnectError({ message: `the grant page answered ${served.status} without a form: ${served.body.slice(0, 200)}` })
    }
    const posted = yield* step("the grant form", form.action, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form.fields.toString()
    })
    const callback = yield* redirect("the grant form", posted, form.action)
    const done = yield* step("the callback", callback)
    if (done.status !== 200) {
      const words = /<p>([^<]*)<\/p>/.exec(done.body)?.[1] ?? done.body.slice(0, 200)
      return yield* new DemoConnectError({ message: `the callback answered ${done.status}: ${words}` })
    }
    yield* Effect.logInfo(`demo: business ${demo.businessId} connected itself through ${link}`)
    return true
  })

/** Turns webhooks on, keeps a little activity going, and prints progress. */
export const drive = (simUrl: string, demo: DemoInfo, server: RunningServer, adminKey: string) =>
  Effect.gen(function*() {
    const control = new SimulatorControl(simUrl)
    const granted = yield* connect(demo, server)
    const enabled = yield* Effect.tryPromise(() => control.enableWebhooks(demo.appId, { callbackUrl: server.webhookUrl(demo.appId), verifyToken: demo.verifyToken }))
    console.log(`
ocs sync server   ${server.url}
  webhooks        ${server.webhookUrl(demo.appId)}  (webhooksEnabled: ${enabled.enabled ? "answered 200" : enabled.outcome})
  console         ${server.url}/ui   (sign in with the admin key)
  admin API       ${server.url}/admin/tenants   (header x-admin-key: ${adminKey})
  health          ${server.url}/healthz  ${server.url}/readyz  ${server.url}/metrics
simulator         ${simUrl}   (control API ${simUrl}/_sim)
demo tenant       appId ${demo.appId}, businessId ${demo.businessId}  (${granted ? "connected through the grant flow" : "token pasted"})
connect link      ${server.url}/connect/${demo.appId}   (another simulator business connects itself)
`)
    const scope = yield* Scope.Scope
    let tick = 0
    const activity = Effect.tryPromise(async () => {
      tick++
      const productId = String(100_000 + 1 + (tick * 37) % 1000)
      switch (tick % 4) {
        case 0:
          return control.updateProduct(demo.businessId, productId, { price: 10 + (tick % 90) })
        case 1:
          return control.changeInventory(demo.businessId, [{ productId, depotId: 1, quantity: tick % 25 }])
        case 2:
          return control.addOrder(demo.businessId, { customerName: `Customer ${tick}`, customerMobile: `09${String(tick).padStart(8, "0")}`, products: [{ productId, quantity: 1 + (tick % 3) }] })
        default:
          return control.updateProduct(demo.businessId, productId, { name: `Product ${productId} (rev ${tick})` })
      }
    }).pipe(Effect.ignore)
    yield* Effect.forkIn(Effect.repeat(activity, Schedule.spaced("2 seconds")), scope)

    const readModels = yield* ReadModels.ReadModels
    const ingestion = yield* Ingestion.Ingestion
    const limiter = yield* RateLimiter.RateLimiter
    const store = yield* SyncState.SyncStateStore
    const tenant = { appId: demo.appId, businessId: demo.businessId }
    const progress = Effect.gen(function*() {
      const counts = yield* readModels.counts(tenant)
      const hooks = yield* ingestion.metrics
      const keys = yield* limiter.metrics
      const states = yield* store.states(demo.appId, demo.businessId)
      const pages = states.reduce((n, s) => n + s.pages, 0)
      console.log(
        `[${new Date().toISOString().slice(11, 19)}] products ${counts.products}, stock rows ${counts.inventory}, orders ${counts.orders}, bills ${counts.bills}, customers ${counts.customers}` +
          ` | pages pulled ${pages}, calls ${keys.reduce((n, k) => n + k.calls, 0)}, locks ${keys.reduce((n, k) => n + k.locks, 0)}` +
          ` | webhooks accepted ${hooks.accepted}, duplicates ${hooks.duplicates}`
      )
    }).pipe(Effect.catch(() => Effect.void))
    yield* Effect.forkIn(Effect.repeat(progress, Schedule.spaced("3 seconds")), scope)
  })
