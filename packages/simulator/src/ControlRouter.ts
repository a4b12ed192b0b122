/**
 * The control API's router: routes are data (method, path pattern with `:params`, handler),
 * grouped by concept in the `Control*` modules; adding an operation is adding an entry to one
 * of those lists. A path that matches with another method answers 405, no match 404.
 */
import type * as Http from "node:http"
import * as Json from "@ocs/protocol/Json"
import { ControlError, type ControlRequest } from "./ControlRequest.ts"
import { send } from "./internal/Http.ts"
import type { World } from "./World.ts"

export type Handler = (world: World, req: ControlRequest, params: ReadonlyArray<string>) => unknown | Promise<unknown>

export interface Route {
  readonly method: string
  readonly pattern: ReadonlyArray<string>
  readonly handler: Handler
}

export const route = (method: string, path: string, handler: Handler): Route => ({
  method,
  pattern: path.split("/").filter(Boolean),
  handler
})

const match = (pattern: ReadonlyArray<string>, parts: ReadonlyArray<string>): Array<string> | undefined => {
  if (pattern.length !== parts.length) return undefined
  const params: Array<string> = []
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i]!.startsWith(":")) params.push(decodeURIComponent(parts[i]!))
    else if (pattern[i] !== parts[i]) return undefined
  }
  return params
}

/** A handler of control requests that answers each with the first of `routes` that matches it. */
export const router = (routes: ReadonlyArray<Route>) =>
async (
  world: World,
  req: Http.IncomingMessage,
  res: Http.ServerResponse,
  path: string,
  query: string,
  body: Buffer | undefined
): Promise<void> => {
  const parts = path.split("/").filter(Boolean)
  const method = req.method ?? "GET"
  try {
    let parsedBody: unknown = undefined
    if (body !== undefined && body.length > 0) {
      const parsed = Json.parseBytes(body)
      if (parsed._tag === "Failure") throw new ControlError(400, `body: ${parsed.failure.message}`)
      parsedBody = parsed.success.value
    } else if (body === undefined) throw new ControlError(413, "body too large")
    const allowed: Array<string> = []
    for (const r of routes) {
      const params = match(r.pattern, parts)
      if (params === undefined) continue
      if (r.method !== method) {
        allowed.push(r.method)
        continue
      }
      const result = await r.handler(world, { method, parts, query: new URLSearchParams(query), body: parsedBody }, params)
      return send(res, 200, Json.stringify(result))
    }
    if (allowed.length > 0) throw new ControlError(405, `use ${allowed.join(" or ")}`)
    throw new ControlError(404, `no control route ${method} ${path}`)
  } catch (error) {
    if (error instanceof ControlError) return send(res, error.status, JSON.stringify({ error: error.message }))
    send(res, 500, JSON.stringify({ error: error instanceof Error ? error.message : String(error) }))
  }
}
