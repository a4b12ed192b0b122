/**
 * The API-side faults (see Faults.ts), run before authentication so that a fault hits a call
 * whatever its credentials: latency, an HTTP 5xx, a cut connection, a hostile 200 body.
 */
import type * as Http from "node:http"
import { type Call, finish, logCall } from "./ApiCall.ts"
import type { FaultOf } from "./Faults.ts"

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Runs the API-side faults; true when the call was answered (or dropped) by a fault. */
export const applyFaults = async (call: Call, req: Http.IncomingMessage): Promise<boolean> => {
  const { faults } = call.env
  const delay = faults.take("latency", call, (f) => f.phase !== "after").reduce((sum, f) => sum + f.ms, 0)
  if (delay > 0) await sleep(delay)
  if (faults.first("reset", call) !== undefined) {
    logCall(call, 0, "fault:reset")
    req.socket.destroy()
    return true
  }
  const status = faults.first("status", call)
  if (status !== undefined) {
    const code = status.status ?? 500
    finish(call, code, "fault:status", status.body ?? `${code} simulated server error`, "text/plain; charset=utf-8")
    return true
  }
  const malformed = faults.first("malformed", call)
  if (malformed !== undefined) {
    finish(call, 200, "fault:malformed", malformedBody(malformed.variant))
    return true
  }
  return false
}

const malformedBody = (variant: FaultOf<"malformed">["variant"]): string => {
  switch (variant) {
    case "nonJson":
      return "<html><body><h1>502 Bad Gateway</h1></body></html>"
    case "truncated":
      return `{"code":1,"data":[{"id":100001,"name":"Red Sh`
    case "wrongTypes":
      return `{"code":"1","data":{"id":"x"},"paginator":"next","warning":42}`
    case "hugeNumbers":
      return `{"code":1,"data":[{"id":1${"0".repeat(400)},"price":1e999,"quantity":-1e400}],"paginator":{"next":[${
        "9".repeat(1000)
      }]}}`
    case "empty":
      return ""
    case "deep":
      return "[".repeat(100_000) + "]".repeat(100_000)
  }
}
