/**
 * Throughput of the writes with rate limiting off: order/add (one order of 3 lines, a fresh
 * appOrderId each call) and product/add (100 products a call), measured with autocannon
 * against a simulator in its own process: the baseline of a write-path benchmark (a bare call).
 * Afterwards the effects ledger is compared with the calls: every answered call took effect,
 * and calls still in flight when the run stopped (at most one per connection) may have too.
 *
 *   ./ocs node packages/simulator/bench/write.bench.ts [--quick]
 */
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"
import { startServer } from "./server.ts"

export interface WriteBenchFigure {
  readonly operation: string
  readonly itemsPerCall: number
  readonly requestsPerSecond: number
  readonly itemsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly answered: number
  readonly sent: number
  readonly non2xx: number
  /** Effects in the ledger: between answered × itemsPerCall and sent × itemsPerCall. */
  readonly effects: number
}

export interface WriteBenchResult {
  readonly name: "simulator.writes"
  readonly connections: number
  readonly durationSeconds: number
  readonly figures: ReadonlyArray<WriteBenchFigure>
}

export const runWriteBench = async (options: { readonly quick?: boolean } = {}): Promise<WriteBenchResult> => {
  const connections = 16
  const duration = options.quick === true ? 3 : 10
  const server = await startServer(1000)
  try {
    const demo = await (await fetch(`${server.url}/_sim/demo`)).json() as Record<string, unknown>
    const base = `${demo["posBaseUrl"]}/v3.0`
    const query = `appId=${demo["appId"]}&businessId=${demo["businessId"]}`
    const headers = { authorization: String(demo["accessToken"]), "content-type": "application/json" }
    const effects = async (kind: string): Promise<number> =>
      ((await (await fetch(`${server.url}/_sim/businesses/${demo["businessId"]}/effects/count`, {
        method: "POST",
        body: JSON.stringify({ kind })
      })).json()) as { total: number }).total
    const run = async (operation: string, kind: string, itemsPerCall: number, body: (n: number) => string): Promise<WriteBenchFigure> => {
      let n = 0
      const result = await autocannon({
        url: `${base}/${operation}?${query}`,
        method: "POST",
        headers,
        connections,
        duration,
        requests: [{ setupRequest: (req) => ({ ...req, body: body(n++) }) }]
      })
      const answered = result["2xx"]
      return {
        operation,
        itemsPerCall,
        requestsPerSecond: Math.round(result.requests.average),
        itemsPerSecond: Math.round(result.requests.average * itemsPerCall),
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        answered,
        // autocannon reports the requests sent; its type declarations leave the field out.
        sent: (result.requests as unknown as { readonly sent: number }).sent,
        non2xx: result.non2xx,
        effects: await effects(kind)
      }
    }
    const order = await run("order/add", "order.add", 1, (n) =>
      JSON.stringify({
        channel: { appOrderId: `BENCH-${n}` },
        shippingAddress: { name: "Bench", mobile: "0912345678" },
        products: [100001, 100002, 100003].map((id) => ({ id, price: 1000, quantity: 1 }))
      }))
    const products = await run("product/add", "product.add", 100, (n) =>
      JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ appProductId: `B-${n}-${i}`, name: `Bench ${n}/${i}`, price: 1000 }))))
    return { name: "simulator.writes", connections, durationSeconds: duration, figures: [order, products] }
  } finally {
    server.stop()
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === Path.resolve(process.argv[1])) {
  const result = await runWriteBench({ quick: process.argv.includes("--quick") })
  for (const f of result.figures) {
    console.log(`${f.operation}: ${f.requestsPerSecond} requests/s (${f.itemsPerSecond} items/s), p50 ${f.p50Ms} ms, p99 ${f.p99Ms} ms, ` +
      `answered ${f.answered} of ${f.sent} sent, non-2xx ${f.non2xx}, effects ${f.effects} ` +
      `(${f.effects >= f.answered * f.itemsPerCall && f.effects <= f.sent * f.itemsPerCall ? "as expected" : "UNEXPECTED"})`)
  }
  console.log(JSON.stringify(result))
}
