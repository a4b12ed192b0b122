/**
 * A stalled disk under the server: its data folder is a loop-mounted ext4 image, frozen with
 * `fsfreeze -f` for a few seconds while `/healthz` is probed every 20 ms and webhooks arrive.
 * Figures: `/healthz` p50/p99 during the freeze against the same probe on the idle server of the
 * same run, and how long webhooks sent during the freeze waited for their 503. The server runs
 * with `sqlite.exclusiveLocking` unless `--shared` is given (then it is the default mode's figure).
 *
 * Needs root (mount, fsfreeze); otherwise the result says why it was skipped. The filesystem is
 * thawed and unmounted in a `finally`, and a detached watchdog thaws it should this process die.
 *
 *   ./ocs node apps/sync-server/bench/stalledDisk.bench.ts [--quick] [--shared]
 */
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { APP, BUSINESS, startWebhookServer, TOKEN } from "./webhookServer.ts"

const STORE_TIMEOUT_SECONDS = 2

export type StalledDiskBenchResult = {
  readonly bench: "sync-server-stalled-disk"
  readonly skipped: string
} | {
  readonly bench: "sync-server-stalled-disk"
  readonly exclusiveLocking: boolean
  readonly freezeMillis: number
  readonly idleP50Millis: number
  readonly idleP99Millis: number
  readonly frozenP50Millis: number
  readonly frozenP99Millis: number
  readonly frozenMaxMillis: number
  readonly probes: number
  /** Status and milliseconds of each webhook sent at the start of the freeze. */
  readonly webhooks: ReadonlyArray<{ readonly status: number; readonly millis: number }>
}

/** One request on its own connection: its status (0: no answer) and how long it took, ms. */
export const request = (url: string, body?: string, timeoutMs = 60_000) =>
  new Promise<{ readonly status: number; readonly millis: number }>((resolve) => {
    const started = performance.now()
    const req = Http.request(url, { method: body === undefined ? "GET" : "POST", agent: false, headers: body === undefined ? {} : { "content-type": "application/json" } }, (res) => {
      res.resume()
      res.on("end", () => resolve({ status: res.statusCode ?? 0, millis: performance.now() - started }))
    })
    req.on("error", () => resolve({ status: 0, millis: performance.now() - started }))
    req.setTimeout(timeoutMs, () => req.destroy())
    req.end(body)
  })

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return Math.round((s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN) * 10) / 10
}

const envelope = (id: number) => `{"event":"productAdd","businessId":${BUSINESS},"webhooksVerifyToken":"${TOKEN}","data":{"id":${id}}}`

const thaw = (mount: string) => {
  try {
    execFileSync("fsfreeze", ["-u", mount], { stdio: "ignore" })
  } catch {
    // not frozen
  }
}

export const runStalledDiskBench = async (options: { readonly quick?: boolean; readonly shared?: boolean } = {}): Promise<StalledDiskBenchResult> => {
  if (process.getuid?.() !== 0) return { bench: "sync-server-stalled-disk", skipped: "needs root (mount -o loop, fsfreeze)" }
  const freezeMillis = options.quick ? 4000 : 12_000
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "ocs-bench-frozen-"))
  const mount = Path.join(root, "data")
  const image = Path.join(root, "disk.img")
  Fs.mkdirSync(mount)
  Fs.writeFileSync(image, "")
  Fs.truncateSync(image, 64 * 1024 * 1024)
  execFileSync("mkfs.ext4", ["-q", "-F", image])
  execFileSync("mount", ["-o", "loop", image, mount])
  let server: Awaited<ReturnType<typeof startWebhookServer>> | undefined
  try {
    server = await startWebhookServer({
      adminKey: "bench-stalled-disk-admin-key-0123",
      encryptionKey: "5b".repeat(32),
      dataDir: mount,
      storeTimeoutSeconds: STORE_TIMEOUT_SECONDS,
      sqlite: { exclusiveLocking: options.shared !== true, diskProbe: true }
    })
    const url = server.url
    for (let i = 0; i < 20; i++) await request(`${url}/webhooks/${APP}`, envelope(i))
    const idle: Array<number> = []
    for (let i = 0; i < 100; i++) idle.push((await request(`${url}/healthz`)).millis)

    spawn("sh", ["-c", `sleep ${Math.ceil(freezeMillis / 1000) + 20}; fsfreeze -u "$0" 2>/dev/null; exit 0`, mount], { detached: true, stdio: "ignore" }).unref()
    const frozen: Array<number> = []
    let webhooks: ReadonlyArray<{ readonly status: number; readonly millis: number }> = []
    const frozenAt = performance.now()
    execFileSync("fsfreeze", ["-f", mount])
    try {
      const sending = Promise.all(Array.from({ length: 5 }, (_, k) => request(`${url}/webhooks/${APP}`, envelope(100 + k))))
      while (performance.now() - frozenAt < freezeMillis) {
        frozen.push((await request(`${url}/healthz`)).millis)
        await new Promise((r) => setTimeout(r, 20))
      }
      webhooks = (await sending).map((w) => ({ status: w.status, millis: Math.round(w.millis) }))
    } finally {
      thaw(mount)
    }
    return {
      bench: "sync-server-stalled-disk",
      exclusiveLocking: options.shared !== true,
      freezeMillis: Math.round(performance.now() - frozenAt),
      idleP50Millis: percentile(idle, 50),
      idleP99Millis: percentile(idle, 99),
      frozenP50Millis: percentile(frozen, 50),
      frozenP99Millis: percentile(frozen, 99),
      frozenMaxMillis: Math.round(Math.max(...frozen)),
      probes: frozen.length,
      webhooks
    }
  } finally {
    thaw(mount)
    await server?.proc.stop("SIGKILL")
    execFileSync("umount", ["-l", mount])
    Fs.rmSync(root, { recursive: true, force: true })
    if (server !== undefined) Fs.rmSync(server.dir, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === Path.resolve(process.argv[1])) {
  console.log(JSON.stringify(await runStalledDiskBench({ quick: process.argv.includes("--quick"), shared: process.argv.includes("--shared") })))
}
