/**
 * Unfinished bodies against the real server process: 1,000 connections, each from its own
 * loopback address, declare a 1 MiB body, send all but 600 bytes of it (no token), then one
 * byte per second. Before the unverified-body budget the server buffered them all (about a
 * gigabyte). Properties: resident memory grows by less than 100 MB over idle while they are
 * held, valid webhooks sent meanwhile are answered 200 and stored, and memory is back near
 * idle once they close. Figures are printed (the bench row reads them).
 */
import { assert, describe, it } from "vitest"
import * as Net from "node:net"
import { envelope, files, readOnly, request, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

const SLOW = 1000
const DECLARED = 1024 * 1024
const HOLD_MS = 8000

let t: Tenant
const suite = reliabilitySuite({
  simFlags: ["--rate-window", "3", "--products", "5"],
  setup: async (s) => {
    t = await s.tenant({ products: 5, orders: 0 })
  }
})

const rss = async (url: string) => {
  const a = await request(`${url}/metrics`)
  return Number(a.text.split("\n").find((l) => l.startsWith("ocs_process_resident_memory_bytes"))?.split(" ")[1])
}

const webhookRows = (dataDir: string) =>
  readOnly(files(dataDir).events, (db) => (db.prepare("SELECT count(*) AS n FROM records WHERE source = 'webhook'").get() as { n: number }).n)

interface Slow {
  /** The big write is flushed, or the server answered or closed. */
  readonly settled: Promise<void>
  readonly closed: Promise<string>
  readonly stop: () => void
}

const PAD = Buffer.alloc(DECLARED - 600, "x")

/** A connection that sends all but 600 bytes of a declared 1 MiB body, then a byte a second. */
const slowBody = (port: number, appId: string, localAddress: string): Slow => {
  const socket = Net.connect({ port, host: "127.0.0.1", localAddress })
  socket.on("error", () => undefined)
  let text = ""
  socket.on("data", (d) => (text += d.toString()))
  let timer: NodeJS.Timeout | undefined
  let settle = () => {}
  const settled = new Promise<void>((ok) => (settle = ok))
  socket.once("data", () => settle())
  socket.once("connect", () => {
    socket.write(`POST /webhooks/${appId} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${DECLARED}\r\n\r\n`)
    socket.write(PAD, () => settle())
    timer = setInterval(() => socket.write("x"), 1000)
  })
  const closed = new Promise<string>((ok) => socket.once("close", () => {
    clearInterval(timer)
    settle()
    ok(text)
  }))
  return { settled, closed, stop: () => socket.destroy() }
}

const addressOf = (i: number) => `127.1.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`

describe("unfinished bodies", () => {
  it("1,000 slow 1 MiB bodies: memory bounded, valid webhooks stored meanwhile, memory given back", async () => {
    const server = suite.server("ocs-rel-unverified-", { tenants: [t] })
    await server.start()
    const url = server.url
    const port = Number(new URL(url).port)
    // Warm up the paths the measurement goes through, then take the idle figure.
    for (let i = 0; i < 20; i++) await request(`${url}/webhooks/${t.appId}`, { body: envelope(t, "productAdd", { id: 10_000 + i }) })
    const idle = await rss(url)
    const before = webhookRows(server.dataDir)

    let peak = idle
    const slow: Array<Slow> = []
    // In waves of 100, each written out (or answered) before the next: the figure is the
    // server's, not the test's own backlog.
    for (let i = 0; i < SLOW; i += 100) {
      const wave = Array.from({ length: 100 }, (_, k) => slowBody(port, t.appId, addressOf(i + k)))
      slow.push(...wave)
      await Promise.all(wave.map((s) => s.settled))
      peak = Math.max(peak, await rss(url))
    }
    const statuses: Array<number> = []
    const started = Date.now()
    let k = 0
    while (Date.now() - started < HOLD_MS) {
      const a = await request(`${url}/webhooks/${t.appId}`, { body: envelope(t, "productAdd", { id: 20_000 + k++, name: "during the attack" }), timeoutMs: 20_000 })
      statuses.push(a.status)
      peak = Math.max(peak, await rss(url))
      await new Promise((r) => setTimeout(r, 200))
    }
    for (const s of slow) s.stop()
    const answers = await Promise.all(slow.map((s) => s.closed))
    const refused = answers.filter((a) => a.startsWith("HTTP/1.1 503")).length
    // Given back: wait a little for the server to drop what the closed connections held.
    await new Promise((r) => setTimeout(r, 3000))
    const after = await rss(url)
    const stored = webhookRows(server.dataDir) - before
    console.log(
      `[unverified] ${SLOW} slow 1 MiB bodies: resident memory idle ${Math.round(idle / 1e6)} MB, peak ${Math.round(peak / 1e6)} MB (+${Math.round((peak - idle) / 1e6)} MB), ` +
        `after close ${Math.round(after / 1e6)} MB (+${Math.round((after - idle) / 1e6)} MB); ${refused} answered 503 at once; ` +
        `valid webhooks meanwhile: ${statuses.length} sent, ${statuses.filter((s) => s === 200).length} answered 200, ${stored} stored`
    )
    assert.isAbove(statuses.length, 0)
    assert.deepStrictEqual([...new Set(statuses)], [200], "every valid webhook sent meanwhile is answered 200")
    assert.strictEqual(stored, statuses.length, "and stored")
    assert.isAbove(refused, SLOW * 0.9, "unfinished bodies past the budget were refused at once")
    assert.isBelow(peak - idle, 100e6, "memory held by unfinished bodies stays bounded")
    assert.isBelow(after - idle, 100e6, "memory is given back after they close")
    assert.isTrue(server.alive())
  }, 120_000)
})
