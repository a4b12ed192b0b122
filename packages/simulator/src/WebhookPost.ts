/**
 * One webhook POST and how it ended. A delivery succeeds only on HTTP 200; redirects are not
 * followed (docs/api-catalogue.md, Delivery rules 8); an answer slower than `timeoutMs` is a timeout. Requests
 * in flight are tracked in `inflight` so a reset or close can cut them.
 */
import * as Http from "node:http"
import * as Https from "node:https"
import type { DeliveryOutcome } from "./DeliveryLog.ts"

export interface PostResult {
  readonly outcome: DeliveryOutcome
  readonly status: number | null
  readonly error: string | null
}

export const post = (url: string, body: string, timeoutMs: number, inflight: Set<Http.ClientRequest>): Promise<PostResult> =>
  new Promise((resolve) => {
    let settled = false
    const done = (outcome: DeliveryOutcome, status: number | null, error: string | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      inflight.delete(req)
      resolve({ outcome, status, error })
    }
    const target = new URL(url)
    const client = target.protocol === "https:" ? Https : Http
    const req = client.request(target, {
      method: "POST",
      agent: false,
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        "user-agent": "ocs-simulator"
      }
    }, (res) => {
      const status = res.statusCode ?? 0
      res.resume()
      res.on("end", () => {
        if (status === 200) done("ok", status, null)
        else if (status >= 300 && status < 400) done("redirect", status, `redirect to ${res.headers.location ?? "?"} not followed`)
        else done("status", status, `HTTP ${status}`)
      })
      res.on("error", (e) => done("error", status, e.message))
    })
    const timer = setTimeout(() => {
      done("timeout", null, `no answer within ${timeoutMs} ms`)
      req.destroy()
    }, timeoutMs)
    inflight.add(req)
    req.on("error", (e) => done("error", null, e.message))
    req.end(body)
  })
