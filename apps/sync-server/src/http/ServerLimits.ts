/**
 * Limits of the HTTP server against slow or greedy clients. Without them a plain node:http
 * server keeps a half-sent request for 300 s (its default request timeout) and slow headers
 * for 60 s, checked only every 30 s: a few hundred clients trickling bytes hold memory and
 * sockets for minutes. Each limit closes the connection; the sender of a webhook delivers
 * again.
 *
 * The body rate is measured on the socket (`bytesRead`), not by listening to the request:
 * a `data` listener would switch the request into flowing mode before its handler reads it.
 *
 * Connection slots: a cap per source address on top of the global cap, so that one address
 * cannot hold them all; and at the global cap the connection idle longest (a keep-alive
 * socket between requests, or one that has not sent a request yet) is closed to make room, so
 * that a new client gets a slot even when idle connections come from thousands of addresses.
 * Sources the server trusts are counted as they deserve: an allowlisted delivery source is not
 * capped per source; a trusted proxy's requests are counted by the client it forwards for.
 */
import type * as Http from "node:http"
import type * as Net from "node:net"

export interface Limits {
  /** Time to receive a request's headers. Default 10. */
  readonly headersTimeoutSeconds?: number | undefined
  /** Time to receive a whole request. Default 30. */
  readonly requestTimeoutSeconds?: number | undefined
  /** An idle keep-alive connection is closed after this. Default 65 (longer than common proxies' 60). */
  readonly keepAliveTimeoutSeconds?: number | undefined
  /**
   * Open connections, all sources together. At the cap the connection idle longest is closed
   * to make room; when none is idle the new one is closed at once. Default 4096.
   */
  readonly maxConnections?: number | undefined
  /**
   * Open connections from one source address (in-flight requests per forwarded client behind a
   * trusted proxy); past it a new connection is closed at once. Default 256.
   */
  readonly maxConnectionsPerSource?: number | undefined
  /** Request line and headers. Default 16384. */
  readonly maxHeaderBytes?: number | undefined
  /** A request whose body arrives slower than this after the grace period is closed. Default 1024. */
  readonly minBodyBytesPerSecond?: number | undefined
  /** Default 5. */
  readonly bodyGraceSeconds?: number | undefined
}

const resolve = (limits: Limits | undefined) => ({
  headersTimeoutMs: (limits?.headersTimeoutSeconds ?? 10) * 1000,
  requestTimeoutMs: (limits?.requestTimeoutSeconds ?? 30) * 1000,
  keepAliveTimeoutMs: (limits?.keepAliveTimeoutSeconds ?? 65) * 1000,
  maxConnections: limits?.maxConnections ?? 4096,
  maxConnectionsPerSource: limits?.maxConnectionsPerSource ?? 256,
  maxHeaderBytes: limits?.maxHeaderBytes ?? 16384,
  minBodyBytesPerSecond: limits?.minBodyBytesPerSecond ?? 1024,
  bodyGraceMs: (limits?.bodyGraceSeconds ?? 5) * 1000
})

/** Options of `Http.createServer` (or `Https.createServer`) for these limits. */
export const serverOptions = (limits: Limits | undefined): Http.ServerOptions => {
  const l = resolve(limits)
  return {
    keepAliveTimeout: l.keepAliveTimeoutMs,
    headersTimeout: l.headersTimeoutMs,
    // Node requires requestTimeout >= headersTimeout.
    requestTimeout: Math.max(l.requestTimeoutMs, l.headersTimeoutMs),
    maxHeaderSize: l.maxHeaderBytes,
    // How often the two timeouts above are checked (Node's default: 30 s, which would let a
    // 10 s limit run to 40 s).
    connectionsCheckingInterval: Math.min(1000, l.headersTimeoutMs)
  }
}

/** How a peer is counted against the per-source cap (the receiver's source settings decide). */
export interface Sources {
  readonly peerKind: (peer: string) => "own" | "forwarded" | "exempt"
  readonly clientOf: (peer: string, forwardedFor: string | undefined) => string
}

export interface Counters {
  /** Connections open now. */
  readonly open: () => number
  /** Idle connections closed to make room for new ones. */
  readonly evicted: () => number
  /** Connections (or forwarded requests) refused for their source's cap. */
  readonly refusedPerSource: () => number
  /** Connections refused at the global cap with none idle to close. */
  readonly refusedGlobal: () => number
}

interface Connection {
  readonly socket: Net.Socket
  readonly source: string | undefined
  active: number
}

const keyOf = (socket: Net.Socket) => `${socket.remoteAddress ?? ""}|${socket.remotePort ?? 0}`

const forwardedOf = (req: Http.IncomingMessage): string | undefined => {
  const v = req.headers["x-forwarded-for"]
  return typeof v === "string" ? v : v?.join(", ")
}

/**
 * The limits that are not options of the constructor: the connection caps and the body rate.
 * `listener` answers the requests that pass them.
 */
export const apply = (server: Http.Server, limits: Limits | undefined, sources: Sources, listener: Http.RequestListener): Counters => {
  const l = resolve(limits)
  // Keyed by address and port: a TLS socket and the TCP socket under it share both.
  const connections = new Map<string, Connection>()
  // Insertion order is the order connections became idle: the first is the one idle longest.
  const idle = new Set<string>()
  const perSource = new Map<string, number>()
  const forwardedActive = new Map<string, number>()
  let evicted = 0
  let refusedPerSource = 0
  let refusedGlobal = 0

  const forget = (key: string) => {
    const c = connections.get(key)
    if (c === undefined) return
    connections.delete(key)
    idle.delete(key)
    if (c.source !== undefined) {
      const n = (perSource.get(c.source) ?? 1) - 1
      if (n <= 0) perSource.delete(c.source)
      else perSource.set(c.source, n)
    }
  }

  // The raw TCP socket, before TLS and before Node's own `maxConnections` check (not set).
  server.on("connection", (socket: Net.Socket) => {
    const peer = socket.remoteAddress ?? ""
    const kind = sources.peerKind(peer)
    const source = kind === "own" ? peer : undefined
    if (source !== undefined && (perSource.get(source) ?? 0) >= l.maxConnectionsPerSource) {
      refusedPerSource++
      return socket.destroy()
    }
    if (connections.size >= l.maxConnections) {
      const oldest = idle.values().next().value
      if (oldest === undefined) {
        refusedGlobal++
        return socket.destroy()
      }
      evicted++
      const victim = connections.get(oldest)
      forget(oldest)
      victim?.socket.destroy()
    }
    const key = keyOf(socket)
    connections.set(key, { socket, source, active: 0 })
    idle.add(key)
    if (source !== undefined) perSource.set(source, (perSource.get(source) ?? 0) + 1)
    socket.once("close", () => {
      // A new connection may reuse the address and port only after this one closed.
      if (connections.get(key)?.socket === socket) forget(key)
    })
  })

  server.on("request", (req: Http.IncomingMessage, res: Http.ServerResponse) => {
    const key = keyOf(req.socket)
    const c = connections.get(key)
    if (c !== undefined) {
      c.active++
      idle.delete(key)
      res.once("close", () => {
        if (--c.active === 0 && connections.get(key) === c) idle.add(key)
      })
    }
    const peer = req.socket.remoteAddress ?? ""
    if (sources.peerKind(peer) === "forwarded") {
      const client = sources.clientOf(peer, forwardedOf(req))
      const n = forwardedActive.get(client) ?? 0
      if (n >= l.maxConnectionsPerSource) {
        refusedPerSource++
        res.writeHead(503, { "content-type": "application/json", "retry-after": "1", connection: "close" })
        res.end('{"error":"too many requests in flight from this client"}')
        return
      }
      forwardedActive.set(client, n + 1)
      res.once("close", () => {
        const left = (forwardedActive.get(client) ?? 1) - 1
        if (left <= 0) forwardedActive.delete(client)
        else forwardedActive.set(client, left)
      })
    }
    if (l.minBodyBytesPerSecond > 0) watchBodyRate(req, l)
    listener(req, res)
  })

  return {
    open: () => connections.size,
    evicted: () => evicted,
    refusedPerSource: () => refusedPerSource,
    refusedGlobal: () => refusedGlobal
  }
}

const watchBodyRate = (req: Http.IncomingMessage, l: ReturnType<typeof resolve>): void => {
  const hasBody = req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0" ||
    req.headers["transfer-encoding"] !== undefined
  if (!hasBody || req.complete) return
  const socket = req.socket
  const startBytes = socket.bytesRead
  const started = performance.now()
  const check = setInterval(() => {
    if (req.complete || socket.destroyed) return clearInterval(check)
    const elapsed = performance.now() - started
    if (elapsed < l.bodyGraceMs) return
    const rate = (socket.bytesRead - startBytes) / (elapsed / 1000)
    if (rate < l.minBodyBytesPerSecond) {
      clearInterval(check)
      socket.destroy()
    }
  }, 500)
  check.unref()
  req.once("end", () => clearInterval(check))
  req.once("close", () => clearInterval(check))
}
