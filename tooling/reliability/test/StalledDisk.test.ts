/**
 * A stalled store: another process holds an exclusive lock on events.sqlite for longer than
 * the store timeout (2 s here). Properties: deliveries during the stall are answered 503, no
 * sooner than the store timeout and well before the stall ends; `/healthz` answers every
 * probe throughout, none waiting as long as the store timeout (latencies are printed); once
 * the lock is released deliveries are stored again. The lock is taken right after a burst, so the
 * tenant-activity loop's checkpoint write (main thread, events.sqlite) lands inside it.
 */
import { assert, describe, it } from "vitest"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { ADMIN_KEY, envelope, files, maxOffset, request, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

const STORE_TIMEOUT_SECONDS = 2
const LOCK_MILLIS = 7000

let t: Tenant
const suite = reliabilitySuite({
  simFlags: ["--rate-window", "3", "--products", "10"],
  setup: async (s) => {
    t = await s.tenant({ products: 5, orders: 0 })
  }
})

const sqliteModule = fileURLToPath(import.meta.resolve("better-sqlite3"))

/** A process that takes `BEGIN EXCLUSIVE` on `file`, says "locked", and commits after `millis`. */
const holdLock = (file: string, millis: number) =>
  new Promise<{ readonly released: Promise<void> }>((resolve, reject) => {
    const script = `
      const Database = require(${JSON.stringify(sqliteModule)})
      const db = new Database(${JSON.stringify(file)})
      db.pragma("busy_timeout = 10000")
      db.exec("BEGIN EXCLUSIVE")
      console.log("locked")
      setTimeout(() => { db.exec("COMMIT"); db.close(); process.exit(0) }, ${millis})`
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] })
    const released = new Promise<void>((ok) => child.once("exit", () => ok()))
    child.stdout.on("data", (d: Buffer) => {
      if (d.toString().includes("locked")) resolve({ released })
    })
    child.once("error", reject)
    setTimeout(() => reject(new Error("the lock was not taken")), 15_000).unref()
  })

const product = (i: number) =>
  envelope(t, "productUpdate", { id: 9_200_000 + i, name: `stall-${i}`, price: i, updatedAt: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString() })

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0
}

describe("a stalled event-log file", () => {
  it("answers 503 at the store timeout, keeps /healthz answering, and stores again after the stall", async () => {
    const server = suite.server("ocs-rel-stall-", {
      tenants: [t],
      extra: {
        server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
        webhooks: { silenceAlertSeconds: 3600, storeTimeoutSeconds: STORE_TIMEOUT_SECONDS }
      }
    })
    const dataDir = server.dataDir
    await server.start()
    const url = server.url

    // A burst, then the lock at once: the tenant-activity checkpoint of the burst is due within
    // a second, inside the stall.
    for (let i = 0; i < 50; i++) assert.strictEqual((await request(`${url}/webhooks/${t.appId}`, { body: product(i) })).status, 200)
    const lock = await holdLock(files(dataDir).events, LOCK_MILLIS)
    const lockedAt = performance.now()

    // Probe /healthz every 20 ms for the whole stall.
    const probes: Array<number> = []
    let failedProbes = 0
    const probing = { on: true }
    const prober = (async () => {
      while (probing.on) {
        const s = performance.now()
        const a = await request(`${url}/healthz`, { timeoutMs: 10_000 })
        if (a.status === 200) probes.push(performance.now() - s)
        else failedProbes++
        await new Promise((r) => setTimeout(r, 20))
      }
    })()

    const during = await Promise.all(Array.from({ length: 5 }, async (_, k) => {
      const s = performance.now()
      const a = await request(`${url}/webhooks/${t.appId}`, { body: product(100 + k), timeoutMs: 20_000 })
      return { status: a.status, millis: performance.now() - s }
    }))
    console.log(`[stall] deliveries during the stall: ${during.map((d) => `${d.status} in ${Math.round(d.millis)} ms`).join(", ")}`)
    for (const d of during) {
      assert.strictEqual(d.status, 503, "a delivery that cannot be stored is refused for redelivery")
      assert.isAtLeast(d.millis, STORE_TIMEOUT_SECONDS * 1000 * 0.9, "refused at the store timeout, not before")
      // A bound from the configuration, not a speed: past twice the timeout, something held
      // the thread that runs the timer.
      assert.isBelow(d.millis, STORE_TIMEOUT_SECONDS * 1000 * 2, "refused at the store timeout, not when the stall ends")
    }
    assert.isBelow(performance.now() - lockedAt, LOCK_MILLIS, "the refusals came while the lock was held")

    await lock.released
    probing.on = false
    await prober
    const before = maxOffset(dataDir)
    const after = await Promise.all(Array.from({ length: 5 }, (_, k) => request(`${url}/webhooks/${t.appId}`, { body: product(200 + k) })))
    console.log(`[stall] /healthz during the stall: ${probes.length} answered, ${failedProbes} failed; p50 ${percentile(probes, 50).toFixed(1)} ms, p99 ${percentile(probes, 99).toFixed(1)} ms, max ${Math.max(...probes).toFixed(1)} ms`)
    assert.strictEqual(failedProbes, 0, "/healthz answered every probe during the stall")
    // Same: a probe waiting as long as the store timeout means the main thread was blocked.
    assert.isBelow(Math.max(...probes), STORE_TIMEOUT_SECONDS * 1000, "no /healthz probe waited on the locked file")
    assert.isAbove(probes.length, 20)
    assert.deepStrictEqual(after.map((a) => a.status), [200, 200, 200, 200, 200], "stored again after the stall")
    assert.isAtLeast(maxOffset(dataDir) - before, 5)
    assert.isTrue(server.alive())
  }, 120_000)
})
