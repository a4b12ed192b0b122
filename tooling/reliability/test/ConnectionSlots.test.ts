/**
 * Connection slots against the real server process: 4,096 idle keep-alive connections, each
 * from its own loopback address (127.0.x.y), fill the global cap; a new client from another
 * address still gets a slot (the connection idle longest is closed for it), so a valid webhook
 * and `/healthz` are answered. From one address the per-source cap holds: the connections past
 * it are closed by the server at once, not left hanging. An allowlisted source has no cap, and
 * behind a trusted proxy the cap counts each forwarded client's requests in flight: one client
 * past it gets 503 while another behind the same proxy is served. Every socket is closed by the
 * test.
 */
import { assert, describe, it } from "vitest"
import * as Net from "node:net"
import { envelope, eventually, request, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

const IDLE = 4096
const PER_SOURCE = 64

let t: Tenant
const suite = reliabilitySuite({
  simFlags: ["--rate-window", "3", "--products", "5"],
  setup: async (s) => {
    t = await s.tenant({ products: 5, orders: 0 })
  }
})

interface Idle {
  readonly socket: Net.Socket
  /** Resolves once the first answer is in (the connection is then idle between requests). */
  readonly answered: Promise<boolean>
  readonly closed: Promise<void>
  readonly isClosed: () => boolean
}

/** A keep-alive connection from `localAddress` that makes one GET and then stays open, idle. */
const idleConnection = (port: number, localAddress: string, path = "/healthz"): Idle => {
  const socket = Net.connect({ port, host: "127.0.0.1", localAddress })
  let closed = false
  socket.on("error", () => undefined)
  const answered = new Promise<boolean>((ok) => {
    socket.once("data", () => ok(true))
    socket.once("close", () => ok(false))
  })
  const done = new Promise<void>((ok) => socket.once("close", () => {
    closed = true
    ok()
  }))
  socket.once("connect", () => socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`))
  return { socket, answered, closed: done, isClosed: () => closed }
}

const addressOf = (i: number) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`

const PROXY = "127.0.210.1"
const LISTED = "127.0.220.1"

/** One server for the file (a start is the slow part): the caps, a trusted proxy, an allowlist. */
let started: Promise<ReturnType<typeof suite.server>> | undefined
const slotsServer = () =>
  started ??= (async () => {
    const server = suite.server("ocs-rel-slots-", {
      tenants: [t],
      extra: {
        server: {
          host: "127.0.0.1",
          port: 0,
          adminKey: "reliability-admin-key-0123456789",
          limits: { maxConnections: IDLE, maxConnectionsPerSource: PER_SOURCE, bodyGraceSeconds: 60 }
        },
        // The test's own client (127.0.0.1) and the proxy's clients may deliver.
        webhooks: { silenceAlertSeconds: 3600, trustedProxies: [PROXY], sourceAllowlist: ["127.0.0.1", LISTED, "10.0.0.1", "10.0.0.2"] }
      }
    })
    await server.start()
    return server
  })()

describe("connection slots", () => {
  it("a new client gets a slot past 4,096 idle connections from as many addresses; one address is capped", async () => {
    const server = await slotsServer()
    const url = server.url
    const port = Number(new URL(url).port)

    const idle: Array<Idle> = []
    try {
      // In waves, so that the test's own connects do not overrun the listen backlog.
      for (let i = 0; i < IDLE; i += 256) {
        const wave = Array.from({ length: Math.min(256, IDLE - i) }, (_, k) => idleConnection(port, addressOf(i + k)))
        idle.push(...wave)
        await Promise.all(wave.map((c) => c.answered))
      }
      const open = idle.filter((c) => !c.isClosed()).length
      console.log(`[slots] ${IDLE} idle keep-alive connections from ${IDLE} addresses: ${open} open`)
      assert.strictEqual(open, IDLE, "the cap holds exactly this many")

      // Another address: a webhook and /healthz, each on a new connection.
      const webhook = await request(`${url}/webhooks/${t.appId}`, { body: envelope(t, "productAdd", { id: 1, name: "through a full server" }), timeoutMs: 20_000 })
      const health = await request(`${url}/healthz`, { timeoutMs: 20_000 })
      const stillOpen = idle.filter((c) => !c.isClosed()).length
      console.log(`[slots] with the cap full: webhook ${webhook.status}, /healthz ${health.status}; idle connections closed to make room: ${IDLE - stillOpen}`)
      assert.strictEqual(webhook.status, 200, "a valid webhook from another address is answered")
      assert.strictEqual(health.status, 200, "/healthz from another address is answered")
      assert.isAtLeast(IDLE - stillOpen, 1, "an idle connection made room")
    } finally {
      for (const c of idle) c.socket.destroy()
      await Promise.all(idle.map((c) => c.closed))
    }

    // One address alone: the per-source cap. Past it, connections are closed by the server at once.
    await eventually("the slots are free again", async () => ((await request(`${url}/healthz`)).status === 200 ? true : undefined), 20_000, 100)
    const one = Array.from({ length: PER_SOURCE + 20 }, () => idleConnection(port, "127.0.200.1"))
    try {
      const answered = await Promise.all(one.map((c) => c.answered))
      const served = answered.filter(Boolean).length
      const refused = one.filter((c, i) => !answered[i] && c.isClosed()).length
      console.log(`[slots] ${one.length} connections from one address: ${served} served, ${refused} closed at once (cap ${PER_SOURCE})`)
      assert.strictEqual(served, PER_SOURCE, "the cap per source")
      assert.strictEqual(refused, 20, "the rest closed by the server, not left hanging")
      // Another address is not affected by that one's cap.
      assert.strictEqual((await request(`${url}/healthz`)).status, 200)
    } finally {
      for (const c of one) c.socket.destroy()
      await Promise.all(one.map((c) => c.closed))
    }
    assert.isTrue(server.alive())
  }, 180_000)

  it("an allowlisted source is not capped; behind a trusted proxy each forwarded client is", async () => {
    const cap = PER_SOURCE
    const proxy = PROXY
    const listed = LISTED
    const server = await slotsServer()
    const url = server.url
    const port = Number(new URL(url).port)
    const sockets: Array<Idle> = []
    try {
      // Allowlisted: past the cap, every connection is served.
      const fromListed = Array.from({ length: cap + 4 }, () => idleConnection(port, listed))
      sockets.push(...fromListed)
      const listedServed = (await Promise.all(fromListed.map((c) => c.answered))).filter(Boolean).length
      // A source of its own, for contrast: capped.
      const fromOwn = Array.from({ length: cap + 4 }, () => idleConnection(port, "127.0.230.1"))
      sockets.push(...fromOwn)
      const ownServed = (await Promise.all(fromOwn.map((c) => c.answered))).filter(Boolean).length
      console.log(`[slots] ${cap + 4} connections: allowlisted ${listedServed} served, own source ${ownServed} (cap ${cap})`)
      assert.strictEqual(listedServed, cap + 4, "an allowlisted source is not capped")
      assert.strictEqual(ownServed, cap)

      // Through the proxy: requests for client 10.0.0.1 held in flight (the token in the header,
      // the body not sent), one connection each, then more for it and one for 10.0.0.2.
      const held = (forwardedFor: string) => {
        const socket = Net.connect({ port, host: "127.0.0.1", localAddress: proxy })
        socket.on("error", () => undefined)
        let text = ""
        const closed = new Promise<void>((ok) => socket.once("close", () => ok()))
        const answered = new Promise<string>((ok) => {
          socket.on("data", (d: Buffer) => {
            text += d.toString()
            ok(text)
          })
          socket.once("close", () => ok(text))
        })
        socket.once("connect", () =>
          socket.write(
            `POST /webhooks/${t.appId} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${t.verifyToken}\r\n` +
              `X-Forwarded-For: ${forwardedFor}\r\nContent-Length: 100000\r\n\r\n`
          ))
        return { socket, answered, closed, isClosed: () => socket.destroyed }
      }
      const inFlight = Array.from({ length: cap }, () => held("10.0.0.1"))
      sockets.push(...inFlight.map((h) => ({ ...h, answered: h.answered.then(() => true) })))
      // The server has taken them all in (answered nothing yet) before the next ones.
      await eventually("the held requests in flight", async () => {
        const a = await request(`${url}/healthz`)
        return a.status === 200 && inFlight.every((h) => h.socket.bytesWritten > 0) ? true : undefined
      }, 10_000, 50)
      await new Promise((r) => setTimeout(r, 300))
      const past = Array.from({ length: 3 }, () => held("10.0.0.1"))
      sockets.push(...past.map((h) => ({ ...h, answered: h.answered.then(() => true) })))
      const pastAnswers = await Promise.all(past.map((h) => h.answered))
      const other = await request(`${url}/webhooks/${t.appId}`, {
        body: envelope(t, "productAdd", { id: 2, name: "forwarded for another client" }),
        headers: { "x-forwarded-for": "10.0.0.2" },
        localAddress: proxy
      })
      console.log(`[slots] behind the proxy: client past its cap ${pastAnswers.map((a) => a.split("\r\n")[0]).join(", ")}; another client ${other.status}`)
      for (const a of pastAnswers) assert.match(a, /^HTTP\/1\.1 503/, "the client past its cap is refused at once")
      assert.strictEqual(other.status, 200, "another client behind the same proxy is served")
    } finally {
      for (const c of sockets) c.socket.destroy()
      await Promise.all(sockets.map((c) => c.closed))
    }
    assert.isTrue(server.alive())
  }, 120_000)
})
