/**
 * Attacks by anyone without a token, against the server process, each beside the idle figure
 * of the same run:
 *   - 4,096 idle keep-alive connections, each from its own loopback address: a new client's
 *     `/healthz` and a valid webhook still answered (ms), against `/healthz` on the idle server;
 *   - 1,000 unfinished 1 MiB bodies (all but 600 bytes sent, no token), each from its own
 *     address: resident memory growth while held and after close, against idle RSS;
 *   - one address opening 276 connections (its cap is 256): how many were served, how many
 *     closed at once, and how long the slowest refusal took;
 *   - 2,000 wrong `x-admin-key` headers from one address: how they were answered;
 *   - 30 wrong console keys from one address, then the right key from another address: its
 *     answer and time, against a sign-in on the idle server;
 *   - 30 wrong verify tokens from one address, then valid deliveries from the same address:
 *     how they were answered, against valid deliveries from another address.
 *
 *   ./ocs node apps/sync-server/bench/attacks.bench.ts [--quick]
 */
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { APP, BUSINESS, startWebhookServer, TOKEN } from "./webhookServer.ts"

const ADMIN_KEY = "bench-attacks-admin-key-0123456"

export interface AttacksBenchResult {
  readonly bench: "sync-server-attacks"
  readonly idleHealthMillis: number
  readonly idleRssMb: number
  readonly slots: { readonly connections: number; readonly healthMillis: number; readonly healthStatus: number; readonly webhookMillis: number; readonly webhookStatus: number }
  readonly bodies: { readonly connections: number; readonly refused: number; readonly peakRssMb: number; readonly afterCloseRssMb: number }
  readonly oneAddress: { readonly connections: number; readonly served: number; readonly refused: number; readonly slowestRefusalMillis: number }
  readonly signIn: { readonly wrong: number; readonly refused: Record<string, number>; readonly otherAddressStatus: number; readonly otherAddressMillis: number; readonly idleMillis: number }
  readonly adminKeys: { readonly requests: number; readonly unauthorized: number; readonly throttled: number; readonly seconds: number }
  readonly wrongTokens: { readonly wrong: number; readonly refused: Record<string, number>; readonly valid: number; readonly accepted: number; readonly medianMillis: number; readonly otherAddressMedianMillis: number }
}

interface Answer {
  readonly status: number
  readonly millis: number
  readonly text: string
}

const request = (url: string, init: { readonly method?: string; readonly body?: string; readonly headers?: Record<string, string>; readonly localAddress?: string } = {}) =>
  new Promise<Answer>((resolve) => {
    const started = performance.now()
    const req = Http.request(url, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      agent: false,
      ...(init.localAddress === undefined ? {} : { localAddress: init.localAddress }),
      headers: { ...(init.body === undefined ? {} : { "content-type": "application/json" }), ...init.headers }
    }, (res) => {
      let text = ""
      res.on("data", (d: Buffer) => (text += d.toString()))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, millis: performance.now() - started, text }))
    })
    req.on("error", () => resolve({ status: 0, millis: performance.now() - started, text: "" }))
    req.setTimeout(30_000, () => req.destroy())
    req.end(init.body)
  })

const rssMb = async (url: string) => {
  const a = await request(`${url}/metrics`)
  return Number(a.text.split("\n").find((l) => l.startsWith("ocs_process_resident_memory_bytes"))?.split(" ")[1]) / 1e6
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN

/** A socket from `localAddress` that writes `head` (and `body`); settles once written, answered or closed. */
const hold = (port: number, localAddress: string, head: string, body?: Buffer) => {
  const started = performance.now()
  const socket = Net.connect({ port, host: "127.0.0.1", localAddress })
  socket.on("error", () => undefined)
  let text = ""
  let closedAfter = 0
  let settle = () => {}
  const settled = new Promise<void>((ok) => (settle = ok))
  socket.on("data", (d: Buffer) => {
    text += d.toString()
    settle()
  })
  socket.once("connect", () => {
    socket.write(head)
    if (body === undefined) return
    socket.write(body, () => settle())
  })
  const closed = new Promise<string>((ok) => socket.once("close", () => {
    closedAfter = performance.now() - started
    settle()
    ok(text)
  }))
  return { settled, closed, stop: () => socket.destroy(), answered: () => text !== "", closedAfter: () => closedAfter }
}

const addressOf = (block: number, i: number) => `127.${block}.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`

const envelope = (id: number, token = TOKEN) => `{"event":"productAdd","businessId":${BUSINESS},"webhooksVerifyToken":"${token}","data":{"id":${id}}}`

export const runAttacksBench = async (options: { readonly quick?: boolean } = {}): Promise<AttacksBenchResult> => {
  const server = await startWebhookServer({ adminKey: ADMIN_KEY, encryptionKey: "59".repeat(32) })
  const port = Number(new URL(server.url).port)
  try {
    for (let i = 0; i < 20; i++) await request(`${server.url}/webhooks/${APP}`, { body: envelope(i) })
    const idle: Array<number> = []
    for (let i = 0; i < 50; i++) idle.push((await request(`${server.url}/healthz`)).millis)
    const idleRssMb = await rssMb(server.url)

    // Connection slots.
    const n = options.quick ? 1024 : 4096
    const idleConns: Array<ReturnType<typeof hold>> = []
    for (let i = 0; i < n; i += 256) {
      const wave = Array.from({ length: Math.min(256, n - i) }, (_, k) => hold(port, addressOf(2, i + k), "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n"))
      idleConns.push(...wave)
      await Promise.all(wave.map((c) => c.settled))
    }
    const health = await request(`${server.url}/healthz`)
    const webhook = await request(`${server.url}/webhooks/${APP}`, { body: envelope(100) })
    for (const c of idleConns) c.stop()
    await Promise.all(idleConns.map((c) => c.closed))

    // Unfinished bodies.
    const m = options.quick ? 300 : 1000
    const pad = Buffer.alloc(1024 * 1024 - 600, "x")
    const bodies: Array<ReturnType<typeof hold>> = []
    let peak = idleRssMb
    for (let i = 0; i < m; i += 100) {
      const wave = Array.from({ length: Math.min(100, m - i) }, (_, k) =>
        hold(port, addressOf(3, i + k), `POST /webhooks/${APP} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${1024 * 1024}\r\n\r\n`, pad))
      bodies.push(...wave)
      await Promise.all(wave.map((c) => c.settled))
      peak = Math.max(peak, await rssMb(server.url))
    }
    for (const c of bodies) c.stop()
    const answers = await Promise.all(bodies.map((c) => c.closed))
    await new Promise((r) => setTimeout(r, 2000))
    const afterClose = await rssMb(server.url)

    // One address alone: past its cap (256, `server.limits.maxConnectionsPerSource`) a new
    // connection is closed at once, not left waiting.
    const perSource = 256 + 20
    const fromOne = Array.from({ length: perSource }, () => hold(port, "127.6.0.1", "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n"))
    await Promise.all(fromOne.map((c) => c.settled))
    const servedFromOne = fromOne.filter((c) => c.answered()).length
    const refusedFromOne = fromOne.filter((c) => !c.answered())
    await Promise.all(refusedFromOne.map((c) => c.closed))
    const slowestRefusal = Math.max(0, ...refusedFromOne.map((c) => c.closedAfter()))
    for (const c of fromOne) c.stop()
    await Promise.all(fromOne.map((c) => c.closed))

    // Console sign-in: wrong keys from one address, then the operator from another.
    const host = new URL(server.url).host
    const signIn = (key: string, localAddress: string) =>
      request(`${server.url}/ui/session`, { body: JSON.stringify({ key }), headers: { origin: `http://${host}`, host }, localAddress })
    const idleSignIn = await signIn(ADMIN_KEY, "127.7.0.9")
    const wrongKeys = 30
    const signInRefused: Record<string, number> = {}
    for (let i = 0; i < wrongKeys; i++) {
      const a = await signIn(`wrong-console-key-${i}-0123456789`, "127.7.0.1")
      signInRefused[a.status] = (signInRefused[a.status] ?? 0) + 1
    }
    const operator = await signIn(ADMIN_KEY, "127.7.0.2")

    // Wrong admin keys from one address.
    const k = options.quick ? 500 : 2000
    let unauthorized = 0
    let throttled = 0
    const started = performance.now()
    for (let i = 0; i < k; i++) {
      const a = await request(`${server.url}/admin/tenants`, { headers: { "x-admin-key": `wrong-key-${i}-0123456789` }, localAddress: "127.4.0.1" })
      if (a.status === 401) unauthorized++
      else if (a.status === 429) throttled++
    }
    const seconds = (performance.now() - started) / 1000

    // Wrong verify tokens from one (shared) address, then the real sender behind it.
    const wrong = 30
    const refused: Record<string, number> = {}
    for (let i = 0; i < wrong; i++) {
      const a = await request(`${server.url}/webhooks/${APP}`, { body: envelope(200 + i, `wrong-token-${i}`), localAddress: "127.5.0.1" })
      refused[a.status] = (refused[a.status] ?? 0) + 1
    }
    const valid = options.quick ? 10 : 50
    const sameAddress: Array<Answer> = []
    const otherAddress: Array<Answer> = []
    for (let i = 0; i < valid; i++) {
      sameAddress.push(await request(`${server.url}/webhooks/${APP}`, { body: envelope(300 + i), localAddress: "127.5.0.1" }))
      otherAddress.push(await request(`${server.url}/webhooks/${APP}`, { body: envelope(400 + i), localAddress: "127.5.0.2" }))
    }

    return {
      bench: "sync-server-attacks",
      idleHealthMillis: Math.round(median(idle) * 10) / 10,
      idleRssMb: Math.round(idleRssMb),
      slots: { connections: n, healthMillis: Math.round(health.millis * 10) / 10, healthStatus: health.status, webhookMillis: Math.round(webhook.millis * 10) / 10, webhookStatus: webhook.status },
      bodies: { connections: m, refused: answers.filter((a) => a.startsWith("HTTP/1.1 503")).length, peakRssMb: Math.round(peak), afterCloseRssMb: Math.round(afterClose) },
      oneAddress: { connections: perSource, served: servedFromOne, refused: refusedFromOne.length, slowestRefusalMillis: Math.round(slowestRefusal * 10) / 10 },
      signIn: {
        wrong: wrongKeys,
        refused: signInRefused,
        otherAddressStatus: operator.status,
        otherAddressMillis: Math.round(operator.millis * 10) / 10,
        idleMillis: Math.round(idleSignIn.millis * 10) / 10
      },
      adminKeys: { requests: k, unauthorized, throttled, seconds: Math.round(seconds * 10) / 10 },
      wrongTokens: {
        wrong,
        refused,
        valid,
        accepted: sameAddress.filter((a) => a.status === 200).length,
        medianMillis: Math.round(median(sameAddress.map((a) => a.millis)) * 10) / 10,
        otherAddressMedianMillis: Math.round(median(otherAddress.map((a) => a.millis)) * 10) / 10
      }
    }
  } finally {
    await server.proc.stop("SIGKILL")
    Fs.rmSync(server.dir, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === Path.resolve(process.argv[1])) {
  console.log(JSON.stringify(await runAttacksBench({ quick: process.argv.includes("--quick") })))
}
