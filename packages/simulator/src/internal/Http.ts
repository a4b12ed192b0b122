import type * as Http from "node:http"

/** Reads a request body up to `limit` bytes; resolves `undefined` when the body is larger. */
export const readBody = (req: Http.IncomingMessage, limit: number): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let tooLarge = false
    req.on("data", (chunk: Buffer) => {
      if (tooLarge) return
      size += chunk.length
      if (size > limit) {
        tooLarge = true
        chunks.length = 0
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => resolve(tooLarge ? undefined : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
    req.on("error", reject)
  })

export const send = (
  res: Http.ServerResponse,
  status: number,
  body: string,
  contentType = "application/json; charset=utf-8"
): void => {
  if (res.headersSent || res.destroyed) return
  res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) })
  res.end(body)
}

/**
 * An undocumented path: an HTML 404 page as the real service's web server answers it
 * (docs/api-catalogue.md, "Simulator leniency" 6), or under strict mode our JSON envelope.
 */
export const notFound = (strict: boolean, reason: string): { readonly body: string; readonly contentType: string } =>
  strict
    ? { body: JSON.stringify({ code: 0, errorCode: "ERR_NOT_FOUND", messages: reason }), contentType: "application/json; charset=utf-8" }
    : {
      body: "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>" +
        "<p>The requested URL was not found on this server.</p></body></html>\n",
      contentType: "text/html; charset=utf-8"
    }

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"])

export const isLoopbackHost = (hostname: string): boolean => LOOPBACK.has(hostname) || hostname.startsWith("127.")

/** Removes whitespace outside JSON strings (so a received cursor can be compared byte for byte). */
export const minifyJson = (text: string): string => {
  let out = ""
  let start = 0
  let i = 0
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      i++
      while (i < text.length) {
        const d = text.charCodeAt(i)
        if (d === 0x5c) i += 2
        else if (d === 0x22) {
          i++
          break
        } else i++
      }
      continue
    }
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      out += text.slice(start, i)
      while (i < text.length && (text.charCodeAt(i) === 0x20 || text.charCodeAt(i) === 0x0a ||
        text.charCodeAt(i) === 0x0d || text.charCodeAt(i) === 0x09)) i++
      start = i
      continue
    }
    i++
  }
  return start === 0 ? text : out + text.slice(start)
}
