/**
 * Throughput of product/list with rate limiting off, measured with autocannon against a
 * simulator running in its own process (so the load generator does not share its thread).
 *
 *   ./ocs node packages/simulator/bench/list.bench.ts [--quick]
 *
 * Prints requests/s and p99 latency, then one JSON line. `runListBench` returns the figures.
 */
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"
import { startServer } from "./server.ts"

export interface ListBenchResult {
  readonly name: "simulator.product-list"
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly errors: number
  readonly non2xx: number
  readonly durationSeconds: number
  readonly connections: number
  readonly pageSize: number
  readonly products: number
}

export const runListBench = async (options: { readonly quick?: boolean } = {}): Promise<ListBenchResult> => {
  const products = 1_000_000
  const pageSize = 20
  const connections = 32
  const duration = options.quick === true ? 3 : 10
  const server = await startServer(products)
  try {
    const demo = await (await fetch(`${server.url}/_sim/demo`)).json() as Record<string, unknown>
    const url = `${demo["posBaseUrl"]}/v3.0/product/list?appId=${demo["appId"]}&businessId=${demo["businessId"]}`
    const request = {
      url,
      method: "POST",
      headers: { authorization: String(demo["accessToken"]), "content-type": "application/json" },
      body: JSON.stringify({ paginator: { size: pageSize } }),
      connections
    }
    await autocannon({ ...request, duration: 1 }) // warm-up
    const result = await autocannon({ ...request, duration })
    return {
      name: "simulator.product-list",
      requestsPerSecond: Math.round(result.requests.average),
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      errors: result.errors,
      non2xx: result.non2xx,
      durationSeconds: duration,
      connections,
      pageSize,
      products
    }
  } finally {
    server.stop()
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === Path.resolve(process.argv[1])) {
  const result = await runListBench({ quick: process.argv.includes("--quick") })
  console.log(`product/list: ${result.requestsPerSecond} requests/s, p99 ${result.p99Ms} ms ` +
    `(${result.connections} connections, page size ${result.pageSize}, ${result.products} products, ` +
    `errors ${result.errors}, non-2xx ${result.non2xx})`)
  console.log(JSON.stringify(result))
}
