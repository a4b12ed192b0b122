/**
 * The simulator's side of the end-to-end tests: its tenants as the server is configured with
 * them, a server configuration against it, and what it holds, read through its API as a client
 * of the service would.
 */
import type { SimulatorControl } from "@ocs/simulator"
import { parseLoose } from "./processes.ts"

export interface SimulatorTenant {
  readonly appId: string
  readonly businessId: string
  readonly accessToken: string
}

/** A new tenant of the simulator, flat: its ids, its access token and its app's verify token. */
export const createTenant = async (control: SimulatorControl, input?: Parameters<SimulatorControl["createTenant"]>[0]) => {
  const t = await control.createTenant(input)
  return { appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken, verifyToken: t.app.verifyToken }
}

/**
 * The start of a server configuration against the simulator at `simUrl`: on loopback with
 * `adminKey`, its data in `data` beside the configuration, each of `reads` allowed 150 calls in
 * 3 seconds.
 */
export const serverAgainst = (simUrl: string, adminKey: string, reads: ReadonlyArray<string>) => ({
  server: { host: "127.0.0.1", port: 0, adminKey },
  dataDir: "data",
  api: { posBaseUrl: `${simUrl}/pos`, vpageBaseUrl: `${simUrl}/vpage` },
  rateLimits: { overrides: Object.fromEntries(reads.map((r) => [`/v3.0/${r}`, { requests: 150, windowSeconds: 3 }])) }
})

/** Every record of one list query (all its pages), straight from the simulator at `simUrl`. */
export const listAll = async (simUrl: string, t: SimulatorTenant, op: string, filters: object = {}): Promise<Array<any>> => {
  const out: Array<any> = []
  let next: string | undefined
  for (;;) {
    const r = await fetch(`${simUrl}/pos/v3.0/${op}?appId=${t.appId}&businessId=${t.businessId}`, {
      method: "POST",
      headers: { authorization: t.accessToken, "content-type": "application/json" },
      body: `{"filters":${JSON.stringify(filters)},"paginator":{"size":100${next === undefined ? "" : `,"next":${next}`}}}`
    })
    const raw = await r.text()
    const page = parseLoose(raw)
    if (page.code !== 1) throw new Error(`${op}: ${raw}`)
    out.push(...page.data)
    if (page.paginator?.next == null) return out
    // The cursor goes back exactly as received.
    next = raw.slice(raw.indexOf('"next"') + 6).replace(/^\s*:\s*/, "").replace(/\}\s*\}\s*$/, "").trim()
  }
}
