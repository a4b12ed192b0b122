/**
 * A stalled disk for real: the server's data folder is a loop-mounted ext4 image, frozen with
 * `fsfreeze -f` while the server runs (every write to it, and every write fault on a page
 * mapped from it, waits until the thaw). Properties, during a freeze of FREEZE_MILLIS:
 * `/healthz` answers every probe (p99 under 250 ms), the admin API answers, `/readyz` is 503,
 * webhooks are answered 503 with `retry-after` at the store timeout (not at the thaw); after
 * the thaw every webhook answered 200 is in the log and `/readyz` is ready again. The server
 * runs with the disk probe (the default) and `sqlite.exclusiveLocking` (docs/deployment.md: the
 * setting for a disk that may stall): without it the admin API's reads fail during the freeze
 * (docs/architecture.md §4.30). No retry: a held /healthz prints where the main thread waits.
 *
 * Mounting and freezing need root. Off CI and not root the test is skipped with a message; on
 * CI it runs (and fails if it cannot mount). The filesystem is thawed and unmounted in a
 * `finally` and again after the file, and a detached watchdog thaws it even if this process
 * dies: a frozen filesystem left behind hangs whatever touches it next.
 */
import { afterAll, assert, describe, it } from "vitest"
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { ADMIN_KEY, admin, envelope, eventually, files, readOnly, request, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

const STORE_TIMEOUT_SECONDS = 2
const FREEZE_MILLIS = 12_000

const isRoot = process.getuid?.() === 0
const onCi = process.env["CI"] !== undefined && process.env["CI"] !== "" && process.env["CI"] !== "false"
if (!isRoot && !onCi) console.log("[frozen-disk] skipped: mounting and freezing a loop filesystem needs root (runs on CI)")

let t: Tenant
const suite = reliabilitySuite({
  simFlags: ["--rate-window", "3", "--products", "10"],
  setup: async (s) => {
    t = await s.tenant({ products: 5, orders: 0 })
  }
})

const mounts: Array<string> = []
const thaw = (mount: string) => {
  try {
    execFileSync("fsfreeze", ["-u", mount], { stdio: "ignore" })
  } catch {
    // not frozen
  }
}
// Registered after the suite, so it runs first: thawed before anything touches the folder.
afterAll(() => {
  for (const m of mounts) {
    thaw(m)
    execFileSync("umount", ["-l", m])
  }
})

/** Thaws `mount` after `millis` from a detached process, whatever becomes of this one. */
const watchdog = (mount: string, millis: number) =>
  spawn("sh", ["-c", `sleep ${Math.ceil(millis / 1000)}; fsfreeze -u "$0" 2>/dev/null; exit 0`, mount], { detached: true, stdio: "ignore" }).unref()

const product = (i: number) =>
  envelope(t, "productUpdate", { id: 9_300_000 + i, name: `frozen-${i}`, price: i, updatedAt: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString() })

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0
}

const storedNames = (dataDir: string): Set<string> =>
  readOnly(files(dataDir).events, (db) =>
    new Set((db.prepare("SELECT body FROM records WHERE type = 'productUpdate'").all() as Array<{ body: string }>).map((r) => String((JSON.parse(r.body) as { data: { name: string } }).data.name))))

/**
 * Where the server's main thread waits (kernel stack, system call and its file), read from
 * /proc as root: printed when a /healthz probe is held, so a failure names the access.
 */
const mainThreadWait = (pid: number): string => {
  const read = (f: string) => {
    try {
      return Fs.readFileSync(`/proc/${pid}/task/${pid}/${f}`, "utf8").trim()
    } catch (e) {
      return `(${(e as Error).message})`
    }
  }
  const syscall = read("syscall")
  const fd = /^\d+ 0x([0-9a-f]+)/.exec(syscall)?.[1]
  let file = ""
  try {
    if (fd !== undefined) file = Fs.readlinkSync(`/proc/${pid}/fd/${Number.parseInt(fd, 16)}`)
  } catch {
    // not a file descriptor
  }
  return `syscall ${syscall}${file === "" ? "" : ` (${file})`}\n${read("stack")}`
}

describe("a frozen data folder", () => {
  it.skipIf(!isRoot && !onCi)("keeps /healthz and the admin API answering, refuses webhooks at the store timeout, and loses nothing acknowledged", async () => {
    const server = suite.server("ocs-rel-frozen-", {
      tenants: [t],
      extra: {
        server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY },
        webhooks: { silenceAlertSeconds: 3600, storeTimeoutSeconds: STORE_TIMEOUT_SECONDS },
        sqlite: { exclusiveLocking: true }
      }
    })
    const dataDir = server.dataDir
    const image = Path.join(Path.dirname(dataDir), "disk.img")
    Fs.mkdirSync(dataDir, { recursive: true })
    Fs.writeFileSync(image, "")
    Fs.truncateSync(image, 64 * 1024 * 1024)
    execFileSync("mkfs.ext4", ["-q", "-F", image])
    execFileSync("mount", ["-o", "loop", image, dataDir])
    mounts.push(dataDir)

    await server.start()
    const url = server.url
    const acknowledged: Array<string> = []
    const deliver = async (i: number, timeoutMs = 30_000) => {
      const s = performance.now()
      const a = await request(`${url}/webhooks/${t.appId}`, { body: product(i), timeoutMs })
      if (a.status === 200) acknowledged.push(`frozen-${i}`)
      return { status: a.status, millis: performance.now() - s, retryAfter: a.headers["retry-after"] }
    }
    for (let i = 0; i < 30; i++) assert.strictEqual((await deliver(i)).status, 200)
    await eventually("the first webhooks projected", async () => {
      const a = await admin(url, "/admin/overview")
      return a.status === 200 ? true : undefined
    }, 20_000)

    // Idle baseline, the same probe as during the freeze.
    const idle: Array<number> = []
    for (let i = 0; i < 50; i++) {
      const s = performance.now()
      assert.strictEqual((await request(`${url}/healthz`)).status, 200)
      idle.push(performance.now() - s)
    }

    const probes: Array<number> = []
    let failedProbes = 0
    let during: Array<{ status: number; millis: number; retryAfter: unknown }> = []
    let adminDuring: Array<{ status: number; millis: number }> = []
    let readyDuring = 0
    const frozenAt = performance.now()
    watchdog(dataDir, FREEZE_MILLIS + 20_000)
    execFileSync("fsfreeze", ["-f", dataDir])
    try {
      const probing = { on: true }
      const pid = server.current!.proc.child.pid!
      const prober = (async () => {
        while (probing.on) {
          const s = performance.now()
          const held = setTimeout(() => console.log(`[frozen-disk] /healthz held 1 s; the main thread waits in: ${mainThreadWait(pid)}`), 1000)
          const a = await request(`${url}/healthz`, { timeoutMs: FREEZE_MILLIS + 5000 })
          clearTimeout(held)
          if (a.status === 200) probes.push(performance.now() - s)
          else failedProbes++
          await new Promise((r) => setTimeout(r, 20))
        }
      })()
      // Deliveries in two waves (one at once, one after the first timeouts), the admin API and
      // readiness in between.
      const wave = (from: number) => Promise.all(Array.from({ length: 5 }, (_, k) => deliver(from + k, FREEZE_MILLIS + 10_000)))
      const first = await wave(1000)
      const timed = async (path: string) => {
        const s = performance.now()
        const a = await admin(url, path)
        return { status: a.status, millis: performance.now() - s }
      }
      adminDuring = [await timed("/admin/tenants"), await timed("/admin/overview"), await timed(`/admin/tenants/${t.appId}/${t.businessId}/products`)]
      readyDuring = (await request(`${url}/readyz`, { timeoutMs: FREEZE_MILLIS })).status
      during = [...first, ...(await wave(2000))]
      const left = FREEZE_MILLIS - (performance.now() - frozenAt)
      if (left > 0) await new Promise((r) => setTimeout(r, left))
      probing.on = false
      await prober
    } finally {
      thaw(dataDir)
    }
    const thawedAt = performance.now()

    console.log(`[frozen-disk] /healthz idle: p50 ${percentile(idle, 50).toFixed(1)} ms, p99 ${percentile(idle, 99).toFixed(1)} ms`)
    console.log(`[frozen-disk] /healthz frozen: ${probes.length} answered, ${failedProbes} failed; p50 ${percentile(probes, 50).toFixed(1)} ms, p99 ${percentile(probes, 99).toFixed(1)} ms, max ${Math.max(0, ...probes).toFixed(1)} ms`)
    console.log(`[frozen-disk] webhooks frozen: ${during.map((d) => `${d.status} in ${Math.round(d.millis)} ms`).join(", ")}`)
    console.log(`[frozen-disk] admin frozen: ${adminDuring.map((d) => `${d.status} in ${Math.round(d.millis)} ms`).join(", ")}; /readyz ${readyDuring}; frozen for ${Math.round(thawedAt - frozenAt)} ms`)

    assert.strictEqual(failedProbes, 0, "/healthz answered every probe during the freeze")
    assert.isAbove(probes.length, 50)
    assert.isBelow(percentile(probes, 99), 250, "/healthz p99 during the freeze")
    for (const a of adminDuring) {
      assert.strictEqual(a.status, 200, "the admin API answers during the freeze")
      assert.isBelow(a.millis, 1000)
    }
    assert.strictEqual(readyDuring, 503, "not ready while webhooks cannot be stored")
    for (const d of during) {
      assert.strictEqual(d.status, 503, "a delivery that cannot be stored is refused for redelivery")
      assert.isDefined(d.retryAfter)
      assert.isBelow(d.millis, STORE_TIMEOUT_SECONDS * 1000 + 1500, "refused at the store timeout, not at the thaw")
    }

    // After the thaw: stored again, ready again, nothing acknowledged lost.
    await eventually("a webhook stored after the thaw", async () => (await deliver(3000)).status === 200 ? true : undefined, 20_000)
    await eventually("ready after the thaw", async () => (await request(`${url}/readyz`)).status === 200 ? true : undefined, 20_000)
    const stored = storedNames(dataDir)
    const lost = acknowledged.filter((n) => !stored.has(n))
    assert.deepStrictEqual(lost, [], "every acknowledged webhook is in the log")
    assert.isTrue(server.alive())
  }, 90_000)
})
