import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Json from "@ocs/protocol/Json"
import { type RunningSimulator, startSimulator, type SimulatorOptions } from "../src/index.ts"

export interface Caller {
  readonly appId: string
  readonly businessId: string
  readonly accessToken: string
}

export interface ApiAnswer {
  readonly status: number
  readonly text: string
  readonly json: any
}

/** POST {base}/v3.0/<operation> with a raw body text. */
export const call = async (
  sim: RunningSimulator,
  who: Caller,
  operation: string,
  body: string | unknown,
  options: { readonly family?: "pos" | "vpage"; readonly version?: string; readonly query?: string } = {}
): Promise<ApiAnswer> => {
  const base = options.family === "vpage" ? sim.vpageBaseUrl : sim.posBaseUrl
  const query = options.query ?? `appId=${who.appId}&businessId=${who.businessId}`
  const res = await fetch(`${base}/v${options.version ?? "3.0"}/${operation}?${query}`, {
    method: "POST",
    headers: { authorization: who.accessToken, "content-type": "application/json" },
    body: typeof body === "string" ? body : Json.stringify(body)
  })
  const text = await res.text()
  const parsed = Json.parse(text)
  return { status: res.status, text, json: parsed._tag === "Success" ? parsed.success : undefined }
}

export const start = (options: SimulatorOptions = {}) => startSimulator({ port: 0, ...options })

export interface Received {
  readonly at: number
  readonly body: string
  readonly json: any
}

/** A small webhook receiver; `answer` decides the response for each request. */
export const receiver = async (
  answer: (req: Received, n: number) => { status: number; location?: string; delayMs?: number } = () => ({ status: 200 })
) => {
  const received: Array<Received> = []
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString()
      const parsed = Json.parse(body)
      const entry = { at: Date.now(), body, json: parsed._tag === "Success" ? parsed.success : undefined }
      received.push(entry)
      const a = answer(entry, received.length)
      const reply = () => {
        if (res.destroyed) return
        res.writeHead(a.status, a.location === undefined ? {} : { location: a.location })
        res.end("ok")
      }
      if (a.delayMs !== undefined) setTimeout(reply, a.delayMs)
      else reply()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls until `check` returns a value (not undefined) or the timeout passes. */
export const eventually = async <A>(check: () => Promise<A | undefined>, timeoutMs = 5000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await sleep(20)
  }
}
