/**
 * Slow and greedy clients against the server's HTTP limits (short ones here): slow headers
 * are closed at the headers timeout, bodies trickling under the minimum rate are closed after
 * the grace period, connections past the cap are closed at once, and the server's memory
 * stays bounded. Every client is a raw loopback socket that stops by itself.
 */
import { assert, describe, it } from "vitest"
import * as Net from "node:net"
import { ADMIN_KEY, eventually, request, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

let t: Tenant
const suite = reliabilitySuite({
  simFlags: ["--rate-window", "3", "--products", "10"],
  setup: async (s) => {
    t = await s.tenant({ products: 5, orders: 0 })
  }
})

const LIMITS = { headersTimeoutSeconds: 2, requestTimeoutSeconds: 6, minBodyBytesPerSecond: 2000, bodyGraceSeconds: 2, maxConnections: 100 }

interface Slow {
  readonly closed: Promise<number>
  readonly stop: () => void
  readonly isClosed: () => boolean
}

/** A socket that writes `head`, then `drip` every 200 ms until closed; resolves with its lifetime. */
const slowClient = (port: number, head: string, drip: string): Slow => {
  const started = performance.now()
  const socket = Net.connect(port, "127.0.0.1")
  socket.on("error", () => undefined)
  socket.on("data", () => undefined)
  let timer: NodeJS.Timeout | undefined
  socket.once("connect", () => {
    socket.write(head)
    timer = setInterval(() => socket.write(drip), 200)
  })
  let done = false
  const closed = new Promise<number>((ok) => socket.once("close", () => {
    done = true
    clearInterval(timer)
    ok(performance.now() - started)
  }))
  return { closed, stop: () => socket.destroy(), isClosed: () => done }
}

const rss = async (url: string) => {
  const a = await request(`${url}/metrics`)
  return Number(a.text.split("\n").find((l) => l.startsWith("ocs_process_resident_memory_bytes"))?.split(" ")[1])
}

const summary = (xs: ReadonlyArray<number>) => `min ${Math.round(Math.min(...xs))} ms, max ${Math.round(Math.max(...xs))} ms`

describe("slow clients", () => {
  it("closes slow headers and slow bodies at the limits, holds the connection cap, and keeps memory bounded", async () => {
    const server = suite.server("ocs-rel-slow-", { tenants: [t], extra: { server: { host: "127.0.0.1", port: 0, adminKey: ADMIN_KEY, limits: LIMITS } } })
    await server.start()
    const url = server.url
    const port = Number(new URL(url).port)
    const rssBefore = await rss(url)

    // Slow headers: a header line every 200 ms, never the blank line.
    const headers = Array.from({ length: 50 }, () => slowClient(port, `POST /webhooks/${t.appId} HTTP/1.1\r\nHost: x\r\n`, "X-Slow: 1\r\n"))
    const headerLives = await Promise.all(headers.map((c) => c.closed))
    console.log(`[slow] 50 slow-header clients closed after ${summary(headerLives)} (headers timeout ${LIMITS.headersTimeoutSeconds} s)`)
    // A bound from the configuration: Node's defaults (60 s, checked every 30 s) would hold them far longer.
    assert.isBelow(Math.max(...headerLives), LIMITS.requestTimeoutSeconds * 1000, "slow headers were closed by the headers timeout")

    // Slow bodies: a 1 MB body declared, 100 bytes every 200 ms (500 B/s, under the 2000 B/s minimum).
    const bodies = Array.from({ length: 50 }, () =>
      slowClient(port, `POST /webhooks/${t.appId} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n{"event":"productUpdate","data":"`, "a".repeat(100)))
    const bodyLives = await Promise.all(bodies.map((c) => c.closed))
    console.log(`[slow] 50 slow-body clients closed after ${summary(bodyLives)} (grace ${LIMITS.bodyGraceSeconds} s, minimum ${LIMITS.minBodyBytesPerSecond} B/s)`)
    // Closed by the server, not by the request timeout: the body check came first.
    assert.isBelow(Math.max(...bodyLives), LIMITS.requestTimeoutSeconds * 1000, "slow bodies were closed by the rate check, before the request timeout")

    // The connection cap: 300 idle connections at once against a cap of 100.
    const idle = Array.from({ length: 300 }, () => slowClient(port, "", ""))
    await new Promise((r) => setTimeout(r, 500))
    const open = idle.filter((c) => !c.isClosed()).length
    console.log(`[slow] 300 idle connections against a cap of ${LIMITS.maxConnections}: ${open} still open after 500 ms`)
    assert.isAtMost(open, LIMITS.maxConnections, "connections past the cap were closed")
    for (const c of idle) c.stop()
    await Promise.all(idle.map((c) => c.closed))

    const health = await eventually("/healthz once the clients are gone", async () => ((await request(`${url}/healthz`)).status === 200 ? true : undefined), 10_000, 100)
    assert.isTrue(health)
    const rssAfter = await rss(url)
    console.log(`[slow] resident memory: ${Math.round(rssBefore / 1e6)} MB before, ${Math.round(rssAfter / 1e6)} MB after`)
    // Bounded: 100 trickling requests and 300 idle sockets leave no lasting growth (a generous
    // bound; the figures are printed).
    assert.isBelow(rssAfter - rssBefore, 64e6, "resident memory stays bounded")
    assert.isTrue(server.alive())
  }, 120_000)
})
