/**
 * Limits of the HTTP server against slow or greedy clients. Without them a plain node:http
 * server keeps a half-sent request for 300 s (its default request timeout) and slow headers
 * for 60 s, checked only every 30 s: a few hundred clients trickling bytes hold memory and
 * sockets for minutes. Each limit closes the connection; the sender of a webhook delivers
 * again.
 *
 * The body rate is measured on the socket (`bytesRead`), not by listening to the request:
 * a `data` listener would switch the request into flowing mode before its handler reads it.
 */
import type * as Http from "node:http"

export interface Limits {
  /** Time to receive a request's headers. Default 10. */
  readonly headersTimeoutSeconds?: number | undefined
  /** Time to receive a whole request. Default 30. */
  readonly requestTimeoutSeconds?: number | undefined
  /** An idle keep-alive connection is closed after this. Default 65 (longer than common proxies' 60). */
  readonly keepAliveTimeoutSeconds?: number | undefined
  /** Connections beyond this are closed at once. Default 4096. */
  readonly maxConnections?: number | undefined
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

/** The limits that are not options of the constructor: the connection cap and the body rate. */
export const apply = (server: Http.Server, limits: Limits | undefined): void => {
  const l = resolve(limits)
  server.maxConnections = l.maxConnections
  if (l.minBodyBytesPerSecond <= 0) return
  server.on("request", (req: Http.IncomingMessage) => {
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
  })
}
