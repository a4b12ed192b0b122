/**
 * The configuration refuses what it does not know: a misspelt key anywhere in the file (or in
 * an `OCS_` variable) stops the start with its path and the nearest known name, instead of
 * leaving that setting at its default in silence. Then the real program: a file with `syncc:`
 * does not start, and a good file is named on the first line.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { runNode } from "@ocs/testkit/Processes"
import * as Config from "../src/boot/Config.ts"
import { nodeEnv, nodeFlags } from "../src/ops/nodeFlags.ts"
import { SimulatorControl } from "@ocs/simulator"
import { adminClient, eventually, serverBin, spawnNode, startServerProcess, startSimulatorProcess, tempDir } from "./processes.ts"

const writeConfig = (name: string, text: string) => {
  const file = Path.join(tempDir("ocs-config-"), name)
  Fs.writeFileSync(file, text)
  return file
}

/** The message of the load's failure, or "" when it loaded. */
const failureOf = (options: Parameters<typeof Config.load>[0]) =>
  Config.load(options).pipe(Effect.match({ onFailure: (e) => e.message, onSuccess: () => "" }))

describe("Config: unknown keys", () => {
  it.effect("a misspelt top-level key is refused with the nearest known name", () =>
    Effect.gen(function*() {
      const file = writeConfig("ocs.yaml", "syncc:\n  intervalSeconds: 5\n")
      const message = yield* failureOf({ file })
      assert.include(message, "`syncc`: unknown key; did you mean `sync`?")
      assert.include(message, file)
    }))

  it.effect("nested keys are checked at any depth, each with its path", () =>
    Effect.gen(function*() {
      const file = writeConfig("ocs.json", JSON.stringify({
        server: { portt: 1 },
        tenants: [{ appId: 1, verifyTokens: ["t"], businesses: [{ businessId: 2, accessToken: "a", settings: { intervalSecond: 30 } }] }],
        webhooks: { authFailures: { limit: 3, windowSeconds: 60, window: 1 } },
        zebra: true
      }))
      const message = yield* failureOf({ file })
      assert.include(message, "`server.portt`: unknown key; did you mean `port`?")
      assert.include(message, "`tenants[0].businesses[0].settings.intervalSecond`: unknown key; did you mean `intervalSeconds`?")
      // Close to no known name: reported without a guess.
      assert.match(message, /`zebra`: unknown key$/m)
      assert.include(message, "`webhooks.authFailures.window`: unknown key")
    }))

  it.effect("records and a plugin's own config take any key", () =>
    Effect.gen(function*() {
      const file = writeConfig("ocs.json", JSON.stringify({
        rateLimits: { overrides: { "pos:/v3.0/bill/list": { requests: 100, windowSeconds: 30 } } },
        plugins: [{ use: "./mine.ts", config: { anything: { goes: 1 } } }]
      }))
      assert.strictEqual(yield* failureOf({ file }), "")
    }))

  it.effect("OCS_ variables: a misspelt setting is refused, another tool's variable is not read", () =>
    Effect.gen(function*() {
      const typo = yield* failureOf({ env: { OCS_SERVER__PORTT: "9000" } })
      assert.include(typo, "`server.portt`: unknown key; did you mean `port`?")
      const config = yield* Config.load({ env: { OCS_SERVER__PORT: "9000", OCS_HEAP_PROFILE_APPLIED: "compact", OCS_KAFKA_BROKERS: "x:1" } })
      assert.strictEqual(config.server.port, 9000)
    }))

  it.effect("the broker and topic defaults live in one place and fill what a file leaves out", () =>
    Effect.gen(function*() {
      const kafka = yield* Config.load({ env: { OCS_EVENT_LOG__MODE: "kafka" } })
      assert.deepStrictEqual([kafka.eventLog.mode, kafka.eventLog.kafka.brokers, kafka.eventLog.kafka.topic], ["kafka", ["127.0.0.1:9092"], "ocs-events"])
      const file = writeConfig("ocs.yaml", "eventLog:\n  mode: kafka\n  kafka:\n    brokers: [a:9092, b:9092]\n")
      const own = yield* Config.load({ file })
      assert.deepStrictEqual([own.eventLog.kafka.brokers, own.eventLog.kafka.topic], [["a:9092", "b:9092"], "ocs-events"])
      const empty = writeConfig("ocs.yaml", "eventLog:\n  mode: kafka\n  kafka:\n    brokers: []\n")
      assert.include(yield* failureOf({ file: empty }), "brokers")
    }))

  it.effect("sync.concurrency is a setting of the engine's section, checked like the others", () =>
    Effect.gen(function*() {
      const good = yield* Config.load({ file: writeConfig("ocs.yaml", "sync:\n  concurrency: 8\n") })
      assert.strictEqual(good.sync.concurrency, 8)
      assert.include(yield* failureOf({ file: writeConfig("bad.yaml", "sync:\n  concurrency: 0\n") }), "concurrency")
    }))

  it.effect("the README's configuration example is a configuration the server takes", () =>
    Effect.gen(function*() {
      const readme = Fs.readFileSync(new URL("../README.md", import.meta.url), "utf8")
      const example = readme.slice(readme.indexOf("```yaml\n", readme.indexOf("## Configuration")) + 8)
      const file = writeConfig("readme.yaml", example.slice(0, example.indexOf("```")))
      assert.strictEqual(yield* failureOf({ file }), "")
    }))
})

describe("Config: the program", () => {
  it("a file with a misspelt key does not start, and says which key", async () => {
    const file = writeConfig("ocs.yaml", "server:\n  host: 127.0.0.1\n  port: 0\nsyncc:\n  intervalSeconds: 5\n")
    const run = await runNode([...nodeFlags, serverBin, "--config", file], { env: nodeEnv })
    assert.notStrictEqual(run.code, 0)
    assert.include(run.stderr, "`syncc`: unknown key; did you mean `sync`?")
    assert.notInclude(run.stdout + run.stderr, "listening on")
  }, 60_000)

  it("the first line names the configuration it loaded", async () => {
    const { proc, dir } = await startServerProcess({ server: { host: "127.0.0.1", port: 0 }, dataDir: "data" })
    try {
      const out = proc.output()
      assert.include(out, `configuration ${Path.join(dir, "ocs.json")}`)
      assert.notInclude(out, "no configuration given")
    } finally {
      await proc.stop()
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it("--fresh empties the demo's data folder before the demo starts, and refuses a configured one; the demo business connects itself", async () => {
    const file = writeConfig("ocs.yaml", "server:\n  port: 0\n")
    const refused = await runNode([...nodeFlags, serverBin, "--config", file, "--fresh"], { env: nodeEnv })
    assert.strictEqual(refused.code, 2)
    assert.include(refused.stderr, "--fresh empties the demo's data folder and applies only without --config")

    const dataDir = Path.join(tempDir("ocs-fresh-"), "demo")
    Fs.mkdirSync(dataDir, { recursive: true })
    Fs.writeFileSync(Path.join(dataDir, "left-from-last-run"), "x")
    // The demo uses a simulator already answering on its port.
    const sim = await startSimulatorProcess(["--products", "20"])
    const port = new URL(sim.url).port
    const adminKey = "fresh-demo-admin-key-0123456789"
    const { match, proc } = await spawnNode(
      [...nodeFlags, serverBin, "--fresh", "--data-dir", dataDir, "--port", "0", "--simulator-port", port],
      /listening on (http:\/\/[\d.:]+)/,
      { ...nodeEnv, OCS_SERVER__ADMIN_KEY: adminKey },
      60_000
    )
    try {
      assert.isFalse(Fs.existsSync(Path.join(dataDir, "left-from-last-run")))
      assert.isTrue(Fs.existsSync(Path.join(dataDir, "events.sqlite")))
      assert.include(proc.output(), `--fresh: emptied ${dataDir}`)
      // The demo business connects itself through the grant flow (docs/architecture.md §4.32):
      // no token pasted, the simulator's code exchanged once, and the tenant syncs with it.
      const control = new SimulatorControl(sim.url)
      const demo = await control.demo()
      const admin = adminClient(() => match[1]!, adminKey)
      const tenant = await eventually("the demo tenant synced through its grant", async () => {
        const r = await admin(`/admin/tenants/${demo.appId}/${demo.businessId}`)
        return r.status === 200 && r.body.counts.products === 20 ? r.body : undefined
      }, 45_000)
      assert.strictEqual(tenant.status, "active")
      assert.isNotNull(tenant.grantedAt, "registered by a grant, not a pasted token")
      assert.isAbove(tenant.permissions.length, 0)
      const exchanges = (await control.calls({ operation: "app/getaccesstoken" })).calls
      assert.deepStrictEqual(exchanges.map((c) => c.outcome), ["ok"])
      assert.include(proc.output(), "connected through the grant flow")
    } finally {
      await proc.stop()
      await sim.proc.stop()
      Fs.rmSync(Path.dirname(dataDir), { recursive: true, force: true })
    }
  }, 90_000)
})
