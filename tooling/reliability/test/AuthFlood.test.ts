/**
 * An unauthenticated flood against the real server process: 32 connections posting ~1 MiB
 * bodies with wrong verify tokens for a few seconds, from one client behind a trusted proxy.
 * Correctness only (timing is printed, not asserted: the machine is shared): every answer is
 * 401, 429 or 503 (the unverified-body budget), nothing is stored, /healthz keeps answering,
 * the flooding source's wrong tokens stay throttled, and a valid webhook is stored at once
 * from another source and from the flooding source itself.
 */
import { assert, describe, it } from "vitest"
import { envelope, request, webhookRows } from "./support/harness.ts"
import { oneServerSuite } from "./support/suite.ts"

const CONNECTIONS = 32
const FLOOD_MS = 4000
const FLOODER = "198.51.100.7"
const OTHER = "198.51.100.8"

const flood = oneServerSuite("ocs-rel-authflood-", {
  extra: { webhooks: { silenceAlertSeconds: 3600, trustedProxies: ["127.0.0.1"], authFailures: { limit: 20, windowSeconds: 60 } } }
})

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}

describe("unauthenticated flood", () => {
  it("answers every request 401 or 429, stores nothing, keeps /healthz and valid webhooks answered", async () => {
    const url = `${flood.server.url}/webhooks/${flood.tenant.appId}`
    const pad = "x".repeat(1024 * 1024 - 300)
    const before = webhookRows(flood.server.dataDir)
    const statuses = new Map<number, number>()
    const deadline = Date.now() + FLOOD_MS
    let n = 0
    const flooder = async () => {
      while (Date.now() < deadline) {
        // The token comes last, so without throttling each body is read and walked whole.
        const body = `{"event":"productAdd","businessId":${flood.tenant.businessId},"data":{"id":${n++},"pad":"${pad}"},"webhooksVerifyToken":"wrong-${n}"}`
        const a = await request(url, { body, headers: { "x-forwarded-for": FLOODER } })
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
      }
    }
    const health: Array<number> = []
    const healthFailures: Array<number> = []
    const prober = async () => {
      while (Date.now() < deadline) {
        const started = performance.now()
        const a = await request(`${flood.server.url}/healthz`)
        health.push(performance.now() - started)
        if (a.status !== 200) healthFailures.push(a.status)
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    await Promise.all([...Array.from({ length: CONNECTIONS }, flooder), prober()])

    const stored = webhookRows(flood.server.dataDir) - before
    const throttledValid = await request(url, { body: envelope(flood.tenant, "productAdd", { id: 1, name: "from the flooder" }), headers: { "x-forwarded-for": FLOODER } })
    const valid = await request(url, { body: envelope(flood.tenant, "productAdd", { id: 2, name: "another source" }), headers: { "x-forwarded-for": OTHER } })
    const metrics = (await request(`${flood.server.url}/metrics`)).text
    const counted = (reason: string) => Number(new RegExp(`ocs_ingestion_rejected_total\\{reason="${reason}"\\} (\\d+)`).exec(metrics)?.[1])
    const answered = [...statuses].filter(([s]) => s !== 0).reduce((a, [, c]) => a + c, 0)
    console.log(
      `[auth-flood] ${CONNECTIONS} connections x ${FLOOD_MS} ms of ~1 MiB wrong-token bodies: requests=${n} answers ${[...statuses].map(([s, c]) => `${s === 0 ? "reset" : s}=${c}`).join(" ")}; ` +
        `metrics unauthorized=${counted("unauthorized")} throttled=${counted("throttled")}; stored=${stored}; ` +
        `/healthz during the flood: ${health.length} probes, p50 ${percentile(health, 50).toFixed(1)} ms, p99 ${percentile(health, 99).toFixed(1)} ms, max ${Math.max(...health).toFixed(1)} ms, not-200=${healthFailures.length}; ` +
        `afterwards: flooder's valid webhook=${throttledValid.status} (retry-after ${throttledValid.headers["retry-after"]}), other source's=${valid.status}`
    )
    // Every answer is a refusal for want of a token; a reset is the server closing a throttled
    // connection while its body was still being written (the answer is 429 then, not read).
    assert.deepStrictEqual([...statuses.keys()].filter((s) => s !== 0 && s !== 401 && s !== 429 && s !== 503), [])
    assert.isAtLeast(statuses.get(429) ?? 0, 1)
    // `limit` failures, plus the requests already past the throttle check when the last was counted.
    const unauthorized = statuses.get(401) ?? 0
    assert.isTrue(unauthorized >= 20 && unauthorized <= 20 + CONNECTIONS, `401s: ${unauthorized}`)
    assert.isAbove(answered, 0)
    assert.strictEqual(stored, 0, "nothing stored")
    assert.deepStrictEqual(healthFailures, [])
    assert.isAbove(health.length, 0)
    const stillThrottled = await request(url, { body: envelope(flood.tenant, "productAdd", { id: 3 }, "wrong-again"), headers: { "x-forwarded-for": FLOODER } })
    assert.strictEqual(stillThrottled.status, 429, "the flooding source's wrong tokens stay throttled for the window")
    assert.strictEqual(throttledValid.status, 200, "a delivery proving its token from the flooding source is stored")
    assert.strictEqual(valid.status, 200, "another source's valid webhook is stored")
    assert.strictEqual(webhookRows(flood.server.dataDir) - before, 2)
    assert.isTrue(flood.server.alive())
  }, 60_000)
})
