/**
 * A full disk under the server: its data folder is a small tmpfs that is filled while the server
 * runs. Figures: how long after the first webhook refused (503) `/readyz` says not ready, and,
 * once space returns, how long after the first webhook stored it says ready again; against
 * `/readyz` on the idle server of the same run. `/readyz` means "a webhook sent now would be
 * stored" (docs/architecture.md §4.27).
 *
 * Needs root (mount); otherwise the result says why it was skipped. Unmounted in a `finally`.
 *
 *   ./ocs node apps/sync-server/bench/fullDisk.bench.ts
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { APP, BUSINESS, startWebhookServer, TOKEN } from "./webhookServer.ts"
import { request as stalledDiskRequest } from "./stalledDisk.bench.ts"

export type FullDiskBenchResult = {
  readonly bench: "sync-server-full-disk"
  readonly skipped: string
} | {
  readonly bench: "sync-server-full-disk"
  /** `/readyz` on the idle server, ms. */
  readonly idleReadyMillis: number
  /** Webhooks stored after the disk was filled, before the first was refused. */
  readonly storedAfterFill: number
  readonly refusedStatus: number
  /** From the first refused webhook's answer to `/readyz` answering 503, ms. */
  readonly notReadyAfterMillis: number
  /** From the first webhook stored after space returned to `/readyz` answering 200, ms. */
  readonly readyAgainAfterMillis: number
}

const request = (url: string, body?: string) => stalledDiskRequest(url, body, 30_000)

const envelope = (id: number) => `{"event":"productAdd","businessId":${BUSINESS},"webhooksVerifyToken":"${TOKEN}","data":{"id":${id},"pad":"${"p".repeat(2000)}"}}`

/** Polls `/readyz` every 20 ms until it answers `status`; the ms it took (30 s at most). */
const readyzBecomes = async (url: string, status: number) => {
  const started = performance.now()
  while (performance.now() - started < 30_000) {
    if ((await request(`${url}/readyz`)).status === status) return performance.now() - started
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`/readyz did not answer ${status} within 30 s`)
}

export const runFullDiskBench = async (): Promise<FullDiskBenchResult> => {
  if (process.getuid?.() !== 0) return { bench: "sync-server-full-disk", skipped: "needs root (mount -t tmpfs)" }
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "ocs-bench-full-"))
  const mount = Path.join(root, "data")
  Fs.mkdirSync(mount)
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", mount])
  let server: Awaited<ReturnType<typeof startWebhookServer>> | undefined
  try {
    server = await startWebhookServer({ adminKey: "bench-full-disk-admin-key-01234", encryptionKey: "5d".repeat(32), dataDir: mount, storeTimeoutSeconds: 5 })
    const url = server.url
    for (let i = 0; i < 20; i++) await request(`${url}/webhooks/${APP}`, envelope(i))
    await readyzBecomes(url, 200)
    const idle: Array<number> = []
    for (let i = 0; i < 20; i++) idle.push((await request(`${url}/readyz`)).millis)

    const filler = Path.join(mount, "filler")
    const fd = Fs.openSync(filler, "w")
    try {
      const chunk = Buffer.alloc(64 * 1024, 1)
      for (;;) Fs.writeSync(fd, chunk)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e
    } finally {
      Fs.closeSync(fd)
    }
    // Deliver until the log refuses (pages the WAL already holds may take a few more).
    let id = 100
    let stored = 0
    let refused = 200
    for (; id < 5100 && refused === 200; id++) {
      refused = (await request(`${url}/webhooks/${APP}`, envelope(id))).status
      if (refused === 200) stored++
    }
    const notReadyAfterMillis = await readyzBecomes(url, 503)

    Fs.rmSync(filler)
    for (let tries = 0; (await request(`${url}/webhooks/${APP}`, envelope(id++))).status !== 200; tries++) {
      if (tries > 300) throw new Error("no webhook stored after space returned")
      await new Promise((r) => setTimeout(r, 50))
    }
    const readyAgainAfterMillis = await readyzBecomes(url, 200)
    const round = (x: number) => Math.round(x * 10) / 10
    return {
      bench: "sync-server-full-disk",
      idleReadyMillis: round([...idle].sort((a, b) => a - b)[10]!),
      storedAfterFill: stored,
      refusedStatus: refused,
      notReadyAfterMillis: round(notReadyAfterMillis),
      readyAgainAfterMillis: round(readyAgainAfterMillis)
    }
  } finally {
    await server?.proc.stop("SIGKILL")
    execFileSync("umount", ["-l", mount])
    Fs.rmSync(root, { recursive: true, force: true })
    if (server !== undefined) Fs.rmSync(server.dir, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === Path.resolve(process.argv[1])) {
  console.log(JSON.stringify(await runFullDiskBench()))
}
