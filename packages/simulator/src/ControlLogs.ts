/**
 * Control routes over the call log and the delivery log: query (by seq, ids, operation or
 * event, outcome), clear, and wait until no webhook is queued or being sent.
 */
import { Drain } from "./ControlWire.ts"
import { decode, intParam, strParam } from "./ControlRequest.ts"
import { route, type Route } from "./ControlRouter.ts"

/** The filters both logs share, from the query string. */
const common = (q: URLSearchParams) => ({
  since: intParam(q, "since"),
  appId: strParam(q, "appId"),
  businessId: strParam(q, "businessId"),
  outcome: strParam(q, "outcome"),
  limit: intParam(q, "limit")
})

export const logs: ReadonlyArray<Route> = [
  route("GET", "/_sim/calls", (world, { query: q }) => ({
    lastSeq: world.calls.lastSeq,
    calls: world.calls.query({ ...common(q), sinceMs: intParam(q, "sinceMs"), operation: strParam(q, "operation") })
  })),
  route("DELETE", "/_sim/calls", (world) => {
    world.calls.clear()
    return { ok: true }
  }),
  route("GET", "/_sim/deliveries", (world, { query: q }) => ({
    lastSeq: world.webhooks.lastSeq,
    deliveries: world.webhooks.deliveries({ ...common(q), event: strParam(q, "event") })
  })),
  route("DELETE", "/_sim/deliveries", (world) => {
    world.webhooks.clearLog()
    return { ok: true }
  }),
  route("POST", "/_sim/deliveries/drain", async (world, req) => {
    const { timeoutMs } = decode(Drain, req.body)
    return { idle: await world.webhooks.drain(timeoutMs ?? 10_000) }
  })
]
