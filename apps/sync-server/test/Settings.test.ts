/**
 * Every setting of the README's configuration does what it says: each row starts the real
 * server (in this process, on 127.0.0.1, SQLite files in a temporary folder) with the setting
 * at a value whose effect the default could not have, and checks that effect over HTTP or on
 * disk. Settings whose behaviour needs more than a few seconds or other processes are tested
 * where the `elsewhere` table says; a README key in neither table fails the last test, so a new
 * setting cannot be documented without a test that it works.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Path from "node:path"
import { CommandOptions } from "@ocs/commands"
import { ConfigFile } from "@ocs/config"
import * as Config from "../src/boot/Config.ts"
import * as Server from "../src/http/Server.ts"
import { tempDir } from "./processes.ts"

const ADMIN_KEY = "settings-admin-key-0123456789"
const APP = "1001"
const BUSINESS = "42"
const tenants = [{ appId: APP, verifyTokens: ["vt-settings"], businesses: [{ businessId: BUSINESS, accessToken: "token" }] }]

interface Running {
  readonly url: string
  readonly port: number
  readonly dataDir: string
}

/** Runs `probe` against a server started with `overrides` over a quiet base (nothing pulls). */
const withServer = <A>(overrides: Record<string, unknown>, probe: (server: Running) => Promise<A>) =>
  Effect.gen(function*() {
    const dataDir = tempDir("ocs-settings-")
    const base = {
      dataDir,
      server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
      // A port nothing listens on: a pull that starts fails at once; intervals keep them rare.
      api: { posBaseUrl: "http://127.0.0.1:9/pos", vpageBaseUrl: "http://127.0.0.1:9/vpage" },
      sync: { intervalSeconds: 3600, reconcileSeconds: 3600 },
      logLevel: "error"
    }
    const config = yield* Config.load({ overrides: ConfigFile.merge(base, overrides) })
    return yield* Effect.gen(function*() {
      const running = yield* Server.start(config)
      return yield* Effect.promise(() => probe({ url: running.url, port: running.port, dataDir }))
    }).pipe(Effect.scoped, Effect.provide(Server.layer(config)), Effect.ensuring(Effect.sync(() => Fs.rmSync(dataDir, { recursive: true, force: true }))))
  })

/** One raw request; resolves with the status and whether the server closed the socket after it within `closeWithinMs`. */
const raw = (port: number, options: { readonly method?: string; readonly path: string; readonly headers?: Record<string, string>; readonly body?: string; readonly closeWithinMs?: number }) =>
  new Promise<{ status: number; closed: boolean }>((resolve, reject) => {
    const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
    const req = Http.request({ host: "127.0.0.1", port, method: options.method ?? "GET", path: options.path, headers: options.headers, agent }, (res) => {
      res.resume()
      res.on("end", () => {
        const socket = res.socket ?? req.socket
        if (options.closeWithinMs === undefined) {
          agent.destroy()
          return resolve({ status: res.statusCode ?? 0, closed: false })
        }
        const timer = setTimeout(() => {
          agent.destroy()
          resolve({ status: res.statusCode ?? 0, closed: false })
        }, options.closeWithinMs)
        socket.once("close", () => {
          clearTimeout(timer)
          agent.destroy()
          resolve({ status: res.statusCode ?? 0, closed: true })
        })
      })
    })
    req.on("error", reject)
    req.end(options.body)
  })

const adminGet = (url: string, path: string) => fetch(`${url}${path}`, { headers: { "x-admin-key": ADMIN_KEY } })

interface Row {
  readonly setting: string
  readonly overrides: Record<string, unknown>
  /** Fails (throws) unless the setting took effect. */
  readonly check: (server: Running) => Promise<void>
}

const rows: ReadonlyArray<Row> = [
  {
    setting: "server.adminKey",
    overrides: {},
    check: async ({ url }) => {
      assert.strictEqual((await fetch(`${url}/admin/tenants`)).status, 401)
      assert.strictEqual((await adminGet(url, "/admin/tenants")).status, 200)
    }
  },
  {
    // Default 16384: a 4 KiB header would pass.
    setting: "server.limits.maxHeaderBytes",
    overrides: { server: { limits: { maxHeaderBytes: 2048 } } },
    check: async ({ port }) => {
      assert.strictEqual((await raw(port, { path: "/healthz", headers: { "x-pad": "a".repeat(4096) } })).status, 431)
      assert.strictEqual((await raw(port, { path: "/healthz" })).status, 200)
    }
  },
  {
    // Default 65 s: an idle keep-alive connection would outlive the test.
    setting: "server.limits.keepAliveTimeoutSeconds",
    overrides: { server: { limits: { keepAliveTimeoutSeconds: 1 } } },
    check: async ({ port }) => {
      const r = await raw(port, { path: "/healthz", headers: { connection: "keep-alive" }, closeWithinMs: 4000 })
      assert.deepStrictEqual(r, { status: 200, closed: true })
    }
  },
  {
    // Default 1 MiB.
    setting: "webhooks.maxBodyBytes",
    overrides: { webhooks: { maxBodyBytes: 1024 }, tenants },
    check: async ({ port }) => {
      const body = JSON.stringify({ pad: "b".repeat(4096) })
      const r = await raw(port, { method: "POST", path: `/webhooks/${APP}`, headers: { "content-type": "application/json", "content-length": String(body.length) }, body })
      assert.strictEqual(r.status, 413)
    }
  },
  {
    // Default: any source.
    setting: "webhooks.sourceAllowlist",
    overrides: { webhooks: { sourceAllowlist: ["10.1.2.3"] }, tenants },
    check: async ({ url }) => {
      const r = await fetch(`${url}/webhooks/${APP}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
      assert.strictEqual(r.status, 403)
    }
  },
  {
    // Default 20 wrong tokens a minute: the third would be a 401 like the first two.
    setting: "webhooks.authFailures",
    overrides: { webhooks: { authFailures: { limit: 2, windowSeconds: 60 } }, tenants },
    check: async ({ url }) => {
      const statuses: Array<number> = []
      for (let i = 0; i < 3; i++) {
        const r = await fetch(`${url}/webhooks/${APP}`, { method: "POST", headers: { "content-type": "application/json", authorization: "wrong" }, body: "{}" })
        await r.text()
        statuses.push(r.status)
      }
      assert.deepStrictEqual(statuses, [401, 401, 429])
    }
  },
  {
    // Without it (and without OCS_ENCRYPTION_KEY) a key file is created in the data folder.
    setting: "encryptionKey",
    overrides: { encryptionKey: "55".repeat(32), tenants },
    check: async ({ dataDir }) => {
      assert.isUndefined(process.env["OCS_ENCRYPTION_KEY"])
      assert.isTrue(Fs.existsSync(Path.join(dataDir, "tenants.sqlite")))
      assert.isFalse(Fs.existsSync(Path.join(dataDir, "secret.key")))
    }
  },
  {
    // Default: every typed read of the catalogue.
    setting: "sync.resources",
    overrides: { sync: { resources: ["product/list"] }, tenants },
    check: async ({ url }) => {
      const r = await adminGet(url, `/admin/tenants/${APP}/${BUSINESS}/settings`)
      assert.deepStrictEqual(((await r.json()) as { resources: ReadonlyArray<string> }).resources, ["pos:/v3.0/product/list"])
    }
  },
  {
    // This tenant's own resources, over the section's.
    setting: "tenants[].businesses[].settings",
    overrides: {
      sync: { resources: ["product/list", "customer/list"] },
      tenants: [{ ...tenants[0], businesses: [{ ...tenants[0]!.businesses[0], settings: { resources: ["customer/list"] } }] }]
    },
    check: async ({ url }) => {
      const r = await adminGet(url, `/admin/tenants/${APP}/${BUSINESS}/settings`)
      assert.deepStrictEqual(((await r.json()) as { resources: ReadonlyArray<string> }).resources, ["pos:/v3.0/customer/list"])
    }
  },
  {
    // The grant flow: an app with a secret key and public URL has a connect link to the grant page.
    setting: "connect.grantPageUrl",
    overrides: { connect: { grantPageUrl: "https://grant.example/oauth" }, tenants: [{ ...tenants[0], secretKey: "sk-settings", publicUrl: "https://sync.example" }] },
    check: async ({ url }) => {
      const r = await fetch(`${url}/connect/${APP}`, { redirect: "manual" })
      assert.strictEqual(r.status, 302)
      const to = new URL(r.headers.get("location")!)
      assert.strictEqual(`${to.origin}${to.pathname}`, "https://grant.example/oauth")
      assert.strictEqual(to.searchParams.get("appId"), APP)
      assert.isTrue(to.searchParams.get("returnLink")!.startsWith(`https://sync.example/connect/${APP}/callback?state=`))
    }
  },
  {
    // Past the bound the oldest pending state is dropped: its callback is refused before the service is asked.
    setting: "connect.maxPendingStates",
    overrides: { connect: { maxPendingStates: 1 }, tenants: [{ ...tenants[0], secretKey: "sk-settings", publicUrl: "https://sync.example" }] },
    check: async ({ url }) => {
      const stateOf = async () => new URL(new URL((await fetch(`${url}/connect/${APP}`, { redirect: "manual" })).headers.get("location")!).searchParams.get("returnLink")!).searchParams.get("state")!
      const first = await stateOf()
      const second = await stateOf()
      const dropped = await fetch(`${url}/connect/${APP}/callback?state=${encodeURIComponent(first)}&accessCode=x`)
      assert.strictEqual(dropped.status, 400)
      // The second is still pending: it reaches the exchange (nothing listens on the API's port: 502).
      assert.strictEqual((await fetch(`${url}/connect/${APP}/callback?state=${encodeURIComponent(second)}&accessCode=x`)).status, 502)
    }
  },
  {
    setting: "connect.stateTtlSeconds",
    overrides: { connect: { stateTtlSeconds: 0.05 }, tenants: [{ ...tenants[0], secretKey: "sk-settings", publicUrl: "https://sync.example" }] },
    check: async ({ url }) => {
      const location = new URL((await fetch(`${url}/connect/${APP}`, { redirect: "manual" })).headers.get("location")!)
      const state = new URL(location.searchParams.get("returnLink")!).searchParams.get("state")!
      await new Promise((r) => setTimeout(r, 100))
      const late = await fetch(`${url}/connect/${APP}/callback?state=${encodeURIComponent(state)}&accessCode=x`)
      assert.strictEqual(late.status, 400)
      assert.match(await late.text(), /expired/)
    }
  }
]

/**
 * README settings not tested yet, and why: each is a debt, named so that it stays visible.
 */
const untested: Readonly<Record<string, string>> = {
  "server.readiness.maxProjectionLagRecords": "needs a projection held behind the log long enough to read /readyz; the seconds bound is tested"
}

/** README settings whose behaviour is tested elsewhere (slower, other processes, a broker). */
const elsewhere: Readonly<Record<string, string>> = {
  "server.host": "every server test (the address it listens on)",
  "tenants.businesses.settings.pages": "packages/sync/test/PageService.test.ts (grant and configured pages) and apps/sync-server/test/PageService.test.ts (only the granted pages are read)",
  "server.port": "every server test",
  "server.limits.headersTimeoutSeconds": "tooling/reliability/test/SlowClients.test.ts",
  "server.limits.requestTimeoutSeconds": "tooling/reliability/test/SlowClients.test.ts",
  "server.limits.maxConnections": "tooling/reliability/test/ConnectionSlots.test.ts",
  "server.limits.maxConnectionsPerSource": "tooling/reliability/test/ConnectionSlots.test.ts",
  "server.limits.minBodyBytesPerSecond": "tooling/reliability/test/SlowClients.test.ts",
  "server.limits.bodyGraceSeconds": "tooling/reliability/test/SlowClients.test.ts",
  "server.readiness.maxProjectionLagSeconds": "tooling/reliability/test/DiskFull.test.ts",
  "server.tls": "tooling/reliability/test/Tls.test.ts",
  "server.heapProfile": "packages/observability/test/HeapProfile.test.ts",
  dataDir: "every server test (its files are read back)",
  sqlite: "tooling/reliability/test/FrozenDisk.test.ts",
  "sqlite.exclusiveLocking": "tooling/reliability/test/FrozenDisk.test.ts (admin reads answer during a frozen disk)",
  "readModels.store": "test/postgres/ReadModelsPostgres.test.ts (the server projects into PostgreSQL; admin reads answer from it), and below (postgres needs its url)",
  "readModels.postgres": "test/postgres/ReadModelsPostgres.test.ts (url, schema and pool of a real PostgreSQL server)",
  "sqlite.diskProbe": "tooling/reliability/test/FrozenDisk.test.ts (/healthz answers and webhooks get 503 during a frozen disk)",
  "eventLog.mode": "test/kafka/KafkaMode.test.ts",
  "eventLog.kafka.brokers": "test/kafka/KafkaMode.test.ts",
  "eventLog.kafka.topic": "test/kafka/KafkaMode.test.ts",
  "eventLog.kafka.partitions": "test/kafka/SharedPulls.test.ts",
  "eventLog.kafka.sharedPulls": "test/kafka/SharedPulls.test.ts, Cluster.test.ts",
  "eventLog.kafka.maxRequestBytes": "test/kafka/RelayLimits.test.ts",
  "eventLog.kafka.relayDownAfterSeconds": "test/kafka/RelayLimits.test.ts",
  "api.posBaseUrl": "every sync test (the simulator's address)",
  "api.vpageBaseUrl": "every sync test",
  "api.timeoutMs": "tooling/reliability/test/StalledDisk.test.ts, the console suite",
  "rateLimits.skewAllowanceMs": "tooling/reliability/test/RateLimitStorm.test.ts",
  "rateLimits.overrides": "test/Reconciliation.test.ts, test/EndToEnd.test.ts",
  "sync.intervalSeconds": "test/Reconciliation.test.ts",
  "sync.reconcileSeconds": "test/Reconciliation.test.ts",
  "sync.overlapSeconds": "test/Reconciliation.test.ts",
  "sync.gapFillSilenceSeconds": "test/GapFill.test.ts",
  "sync.concurrency": "test/Concurrency.test.ts",
  "commands.seenWithinSeconds": "test/CommandNotSeen.test.ts (1 s: a command whose effect never shows is flagged after it), and its load below",
  operations: "test/Tombstones.test.ts, test/NeedsAttention.test.ts",
  "webhooks.trustedProxies": "tooling/reliability/test/AuthFlood.test.ts",
  "webhooks.storeTimeoutSeconds": "tooling/reliability/test/StoreReadiness.test.ts",
  "webhooks.unverifiedBodyBudgetBytes": "packages/ingestion/test (the receiver's budget)",
  "webhooks.silenceAlertSeconds": "test/NeedsAttention.test.ts",
  plugins: "test/ThirdPartyPlugin.test.ts",
  tenants: "every server test that seeds one",
  "connect.checkIntervalSeconds": "test/Connect.test.ts (checked every second; a revoked token puts the tenant on hold)",
  logLevel: "packages/observability/test/Logging.test.ts",
  "tracing.otlpEndpoint": "test/Telemetry.test.ts",
  "tracing.sampleRatio": "test/Telemetry.test.ts"
}

/**
 * The keys an inline map holds (`{ a: 1, b: { c: 2 } }` after a key): `[depth, key]`, depth 1
 * for the map's own keys and 0 for keys after it closed (a continued parent map).
 */
const inlineKeys = (text: string): ReadonlyArray<readonly [number, string]> => {
  const out: Array<readonly [number, string]> = []
  let depth = 0
  let token = ""
  let expectKey = false
  for (const ch of text) {
    if (ch === "{" || ch === "[") {
      depth++
      token = ""
      expectKey = ch === "{"
    } else if (ch === "}" || ch === "]") {
      depth--
      token = ""
    } else if (ch === ",") {
      token = ""
      expectKey = true
    } else if (ch === ":" && expectKey) {
      const key = token.trim()
      if (/^[a-zA-Z]\w*$/.test(key) && depth <= 1) out.push([depth, key])
      token = ""
      expectKey = false
    } else if (ch === "#") {
      break
    } else {
      token += ch
    }
  }
  return out
}

/** The dotted keys of the README's configuration example. */
const readmeKeys = (): ReadonlyArray<string> => {
  const readme = Fs.readFileSync(new URL("../README.md", import.meta.url), "utf8")
  const start = readme.indexOf("```yaml\n", readme.indexOf("## Configuration")) + 8
  const text = readme.slice(start, readme.indexOf("```", start))
  const keys = new Set<string>()
  const stack: Array<{ indent: number; key: string }> = []
  for (const line of text.split("\n")) {
    const m = /^(\s*)(?:#\s*)?([a-zA-Z][\w.]*):/.exec(line)
    if (m === null) continue
    const indent = m[1]!.length
    while (stack.length > 0 && stack[stack.length - 1]!.indent >= indent) stack.pop()
    const parent = stack.map((s) => s.key).join(".")
    const key = parent === "" ? m[2]! : `${parent}.${m[2]}`
    stack.push({ indent, key: m[2]! })
    keys.add(key)
    for (const [depth, k] of inlineKeys(line.slice(m[0].length))) keys.add(depth === 1 ? `${key}.${k}` : parent === "" ? k : `${parent}.${k}`)
  }
  return [...keys]
}

describe("README settings", () => {
  for (const row of rows) {
    it.live(`${row.setting} does what the README says`, () => withServer(row.overrides, row.check), 20_000)
  }

  it.effect("readModels.store postgres without readModels.postgres, or with a URL that is not one, is refused at load", () =>
    Effect.gen(function*() {
      const load = (readModels: unknown) =>
        Config.load({ overrides: { dataDir: "unused", readModels } }).pipe(Effect.match({ onFailure: (e) => e.message, onSuccess: () => "" }))
      assert.include(yield* load({ store: "postgres" }), "readModels.store postgres needs readModels.postgres.url")
      assert.include(yield* load({ store: "postgres", postgres: { url: "mysql://x" } }), "url")
      assert.include(yield* load({ store: "mongo" }), "store")
      assert.strictEqual(yield* load({ store: "postgres", postgres: { url: "postgres://u@127.0.0.1:5432/ocs", schema: "copy", pool: 2 } }), "")
      assert.strictEqual(yield* load({ store: "sqlite" }), "")
    }))

  it.effect("commands.seenWithinSeconds becomes the engine's bound in milliseconds, from a file or the environment; 0 is refused", () =>
    Effect.gen(function*() {
      const bound = (overrides: unknown, env: Record<string, string> = {}) =>
        Config.load({ overrides: { dataDir: "unused", ...(overrides as object) }, env }).pipe(
          Effect.map((c) => CommandOptions.fromSection(c.commands).seenWithinMs),
          Effect.catch((e) => Effect.succeed(e.message))
        )
      assert.strictEqual(yield* bound({}), undefined, "absent: the engine's default (120 s)")
      assert.strictEqual(yield* bound({ commands: { seenWithinSeconds: 2.5 } }), 2500)
      assert.strictEqual(yield* bound({}, { OCS_COMMANDS__SEEN_WITHIN_SECONDS: "3" }), 3000)
      assert.include(String(yield* bound({ commands: { seenWithinSeconds: 0 } })), "seenWithinSeconds")
      assert.include(String(yield* bound({ commands: { seenWithinSecond: 5 } })), "did you mean `seenWithinSeconds`")
    }))

  it("every setting of the README's example is tested here or where `elsewhere` says", () => {
    const covered = [...rows.map((r) => r.setting), ...Object.keys(elsewhere), ...Object.keys(untested)]
    const isCovered = (key: string) =>
      covered.some((c) => c === key || key.startsWith(`${c}.`) || c.startsWith(`${key}.`) || (c.startsWith("tenants") && key.startsWith("tenants")))
    // A section (`server.limits`) counts as covered through its settings.
    const missing = readmeKeys().filter((k) => !isCovered(k))
    assert.deepStrictEqual(missing, [])
    // The parse itself: nested, inline and commented keys of the example are all seen.
    assert.includeMembers([...readmeKeys()], ["server.limits.maxHeaderBytes", "eventLog.kafka.sharedPulls", "eventLog.kafka.relayDownAfterSeconds", "webhooks.authFailures", "webhooks.silenceAlertSeconds", "sync.concurrency", "tracing.sampleRatio"])
  })
})
