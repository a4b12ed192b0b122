/**
 * Crash: the server (a child process) is SIGKILLed at three moments and restarted over the
 * same data folder. Properties: every webhook answered 200 is in the log exactly once; a full
 * sync resumes from its stored cursor and skips no page; the live read models equal a replay
 * of the log.
 */
import { assert, describe, it } from "vitest"
import { addTenant, agent, admin, envelope, eventually, files, maxOffset, pool, projectedOffset, readOnly, replayDigests, request, type ServerHandle, type Tenant } from "./support/harness.ts"
import { reliabilitySuite } from "./support/suite.ts"

const WEBHOOKS = 10_000
const CONCURRENCY = 32
const BIG_PRODUCTS = 30_000

const tenants: Array<Tenant> = []
const suite = reliabilitySuite({
  simFlags: ["--rate-window", "3", "--products", "10"],
  setup: async (s) => {
    for (let i = 0; i < 4; i++) tenants.push(await s.tenant({ products: 30, orders: 3 }))
  }
})

/** One webhook of the burst: a product update (colliding ids, increasing updatedAt) or an order. */
const webhook = (i: number) => {
  const t = tenants[i % tenants.length]!
  const marker = `crash-${i}`
  const updatedAt = new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString()
  const body = i % 4 === 3
    ? envelope(t, "orderAdd", { id: 7_000_000 + i, appOrderId: `a-${i}`, status: "new", customerName: `c ${i}`, customerMobile: "0900", products: [], updatedAt, marker })
    : envelope(t, "productUpdate", { id: 5_000_000 + (i % 1500), name: `p ${i}`, price: i / 4, updatedAt, marker })
  return { t, marker, body }
}

/** How many log rows hold each webhook marker (read straight from events.sqlite). */
const markerCounts = (dataDir: string) =>
  readOnly(files(dataDir).events, (db) => {
    const rows = db.prepare(
      "SELECT json_extract(body, '$.data.marker') AS m, count(*) AS n FROM records WHERE source = 'webhook' GROUP BY m"
    ).all() as Array<{ m: string | null; n: number }>
    return new Map(rows.map((r) => [r.m ?? "", r.n]))
  })

const assertExactlyOnce = (dataDir: string, acked: ReadonlySet<string>, moment: string) => {
  const counts = markerCounts(dataDir)
  const lost = [...acked].filter((m) => (counts.get(m) ?? 0) === 0)
  const twice = [...counts].filter(([, n]) => n > 1)
  const found = [...acked].filter((m) => counts.get(m) === 1).length
  console.log(`[crash] ${moment}: sent=${WEBHOOKS} acknowledged=${acked.size} found=${found} lost=${lost.length} duplicated=${twice.length} stored-unacknowledged=${[...counts.keys()].filter((m) => !acked.has(m)).length}`)
  assert.deepStrictEqual(lost.slice(0, 5), [], `acknowledged webhooks missing from the log after ${moment}`)
  assert.deepStrictEqual(twice.slice(0, 5), [], `webhooks stored more than once after ${moment}`)
}

describe("crash: SIGKILL during ingestion, projection and a sync page", () => {
  it("keeps every acknowledged webhook exactly once, resumes the sync from its cursor, and the read models equal a replay", async () => {
    const server: ServerHandle = suite.server("ocs-rel-crash-", { tenants })
    const dataDir = server.dataDir
    await server.start()
    const items = Array.from({ length: WEBHOOKS }, (_, i) => webhook(i))
    const acked = new Set<string>()

    // 1. SIGKILL during ingestion: once 30% of the burst is acknowledged, with 32 requests in flight.
    let killed = false
    let killing: Promise<void> | undefined
    const http1 = agent(CONCURRENCY)
    const url1 = server.url
    const t1 = performance.now()
    await pool(items, CONCURRENCY, async (item) => {
      const a = await request(`${url1}/webhooks/${item.t.appId}`, { body: item.body, agent: http1 })
      if (a.status === 200) acked.add(item.marker)
      if (!killed && acked.size >= WEBHOOKS * 0.3) {
        killed = true
        killing = server.kill()
      }
    }, () => killed)
    await killing
    http1.destroy()
    console.log(`[crash] burst 1: ${acked.size} acknowledged in ${Math.round(performance.now() - t1)} ms before SIGKILL`)
    assert.isTrue(killed, "the kill happened during the burst")
    assertExactlyOnce(dataDir, acked, "SIGKILL during ingestion")

    // 2. Restart; the sender redelivers everything unacknowledged; SIGKILL as the last answer
    // arrives, while the projection is still behind the log.
    await server.start()
    const pending = items.filter((x) => !acked.has(x.marker))
    const http2 = agent(CONCURRENCY)
    const url2 = server.url
    let refused = 0
    await pool(pending, CONCURRENCY, async (item) => {
      const a = await request(`${url2}/webhooks/${item.t.appId}`, { body: item.body, agent: http2 })
      if (a.status === 200) acked.add(item.marker)
      else refused++
    })
    await server.kill()
    http2.destroy()
    const lag = maxOffset(dataDir) - projectedOffset(dataDir)
    console.log(`[crash] burst 2: redelivered=${pending.length} refused=${refused}; projection lag at SIGKILL: ${lag} records`)
    assert.strictEqual(refused, 0, "a running server answers every valid webhook 200")
    assert.isAbove(lag, 0, "the kill came while the read models were still catching up")
    assertExactlyOnce(dataDir, acked, "SIGKILL during projection")
    assert.strictEqual(acked.size, WEBHOOKS)

    // 3. SIGKILL during a large full sync (compressed rate window), then resume.
    await server.start()
    const bt = await suite.tenant({ products: BIG_PRODUCTS, orders: 0 })
    const added = await addTenant(server.url, bt)
    assert.strictEqual(added.app.status, 201)
    assert.strictEqual(added.tenant.status, 201)
    const productState = async () => {
      const { body } = await admin(server.url, `/admin/tenants/${bt.appId}/${bt.businessId}`)
      return (body.sync as Array<any>).find((s) => s.resource === "pos:/v3.0/product/list")
    }
    const before = await eventually("the big full sync to be a third through", async () => {
      const s = await productState()
      return s !== undefined && s.cursor !== null && s.pages >= 100 ? s : undefined
    }, 60_000, 50)
    await server.kill()
    const callsBefore = (await suite.control.calls({ appId: bt.appId, operation: "product/list", limit: 200_000 })).calls.filter((c) => c.outcome === "ok").length

    await server.start()
    const after = await eventually("the resumed full sync to complete", async () => {
      const s = await productState()
      return s !== undefined && s.fullCompletedAt !== null ? s : undefined
    }, 120_000, 250)
    const callsTotal = (await suite.control.calls({ appId: bt.appId, operation: "product/list", limit: 200_000 })).calls.filter((c) => c.outcome === "ok").length
    // The pages in the log must form one unbroken chain: first cursor null, each next is the
    // following page's cursor, the last next is null. (Records of type ocs:* are the engine's
    // own bookkeeping beside the pages: a pass's completion, the changes it found.)
    const pages = readOnly(files(dataDir).events, (db) =>
      db.prepare(
        "SELECT json_extract(meta, '$.cursor') AS cursor, json_extract(meta, '$.next') AS next, json_extract(meta, '$.mode') AS mode, json_extract(meta, '$.records') AS records FROM records WHERE source = 'sync' AND type NOT LIKE 'ocs:%' AND app_id = ? AND business_id = ? ORDER BY offset"
      ).all(bt.appId, bt.businessId) as Array<{ cursor: string | null; next: string | null; mode: string; records: number }>
    )
    const byCursor = new Map(pages.map((p) => [p.cursor ?? "", p]))
    let chained = 0
    let chainedRecords = 0
    let at = byCursor.get("")
    while (at !== undefined && chained <= pages.length) {
      chained++
      chainedRecords += at.records
      at = at.next === null ? undefined : byCursor.get(at.next)
    }
    const simCount = (await suite.control.business(bt.businessId)).counts?.products
    const rm = await eventually("the read model to hold the big catalogue", async () => {
      const { body } = await admin(server.url, `/admin/tenants/${bt.appId}/${bt.businessId}`)
      return body.counts.products === simCount ? body.counts.products as number : undefined
    }, 60_000, 250).catch(async () => (await admin(server.url, `/admin/tenants/${bt.appId}/${bt.businessId}`)).body.counts.products as number)
    console.log(`[crash] sync kill: pages before SIGKILL=${before.pages}, pages in log=${pages.length} (resumed=${pages.filter((p) => p.mode === "resume").length}), chain=${chained}, product/list calls before=${callsBefore} total=${callsTotal}; products simulator=${simCount} read model=${rm} chained records=${chainedRecords}`)
    assert.isTrue(pages.some((p) => p.mode === "resume"), "the restarted server resumed the full sync")
    assert.strictEqual(chained, pages.length, "every stored page is on the cursor chain, which runs from the first page to the end")
    assert.isAtMost(callsTotal, pages.length + 2, "the restart did not start the sync over (at most the in-flight page is fetched again)")
    assert.strictEqual(rm, simCount, "no page skipped: the read model holds every product the simulator has")
    assert.strictEqual(after.fullCompletedAt !== null, true)

    // 4. The restarted server caught up: stop it, then replay the log into a new file.
    await eventually("the projection to reach the end of the log", async () => {
      const end = maxOffset(dataDir)
      return projectedOffset(dataDir) === end ? end : undefined
    }, 60_000, 250)
    assertExactlyOnce(dataDir, acked, "all restarts")
    assert.strictEqual(await server.stop(), 0, "graceful stop")
    const d = await replayDigests(dataDir)
    const rows = Object.entries(d.live.tables).map(([k, v]) => `${k}=${v.rows}`).join(" ")
    console.log(`[crash] replay: log records=${d.records}; live digest ${d.live.digest.slice(0, 12)} vs replay ${d.replay.digest.slice(0, 12)}; rows ${rows}`)
    assert.deepStrictEqual(d.live, d.replay, "live read models equal a full replay of the log")
    assert.isAbove(d.live.tables["products"]!.rows, BIG_PRODUCTS * 0.9)
  })
})
