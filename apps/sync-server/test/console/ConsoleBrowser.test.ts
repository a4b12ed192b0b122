/**
 * The operator console in real Chromium (Debian's package; playwright-core drives it) against
 * the servers `./ocs start` runs: sign in by keyboard, find the demo tenant, watch its sync
 * move, pause and resume it, see a lock count down after a forced 429, open an entity's
 * history, redrive a dead letter, connect a business through the grant flow; a chart counts the
 * webhooks the test sent and keeps them over a reload, the data explorer finds orders and
 * products and shows tombstones on request; the commands page counts a tenant's commands by state,
 * filters them, and a person decides two commands left in doubt by a lost answer; a form asks for a
 * command (a refused payload named field by field, an accepted one confirmed); the page-service
 * view shows a tenant's granted page, its conversations and a conversation's messages. Each page is
 * photographed at a laptop and a phone width;
 * with OCS_UPDATE_SCREENSHOTS=1 the pictures replace those in docs/console/.
 */
import { afterAll, assert, beforeAll, describe, inject, it } from "vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"
import { ADMIN_KEY, admin, adminWhen, askCommand, type Servers, startServers } from "./servers.ts"

const executablePath = inject("chromium")
const shotsDir = process.env["OCS_UPDATE_SCREENSHOTS"] === "1"
  ? fileURLToPath(new URL("../../../../docs/console/", import.meta.url))
  : Fs.mkdtempSync(Path.join(Os.tmpdir(), "ocs-console-shots-"))

let servers: Servers
let browser: Browser
let page: Page

/** Waits (polling the page) until `check` holds; fails after `timeoutMs` with `what`. */
const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 45_000) => {
  const end = Date.now() + timeoutMs
  while (Date.now() < end) {
    if (await check().catch(() => false)) return
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`timed out waiting for ${what}`)
}

const shoot = async (name: string) => {
  await page.screenshot({ path: Path.join(shotsDir, `${name}.png`), fullPage: true })
}

describe.skipIf(executablePath === "")("operator console in Chromium", () => {
  beforeAll(async () => {
    Fs.mkdirSync(shotsDir, { recursive: true })
    servers = await startServers()
    // As root (CI) Chromium's sandbox cannot start; the pages are our own and loopback only.
    browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage"] })
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    // Generous: `./ocs test` runs every suite at once on a small machine.
    page.setDefaultTimeout(60_000)
  }, 120_000)

  afterAll(async () => {
    await page?.close()
    await browser?.close()
    assert.strictEqual(await servers?.stop(), 0)
  })

  it("signs in with the admin key, by keyboard", async () => {
    await page.goto(`${servers.server.url}/ui`)
    await page.waitForSelector("#key")
    await shoot("sign-in")
    // A wrong key is refused with a message; the field keeps the focus (autofocus).
    await page.keyboard.type("wrong-key")
    await page.keyboard.press("Enter")
    await page.getByRole("alert").filter({ hasText: "wrong admin key" }).waitFor()
    await page.fill("#key", "")
    await page.focus("#key")
    await page.keyboard.type(ADMIN_KEY)
    await page.keyboard.press("Enter")
    await page.getByRole("heading", { name: "Overview" }).waitFor()
    // The first Tab reaches the skip link; it moves the focus to the content, not the route.
    await page.keyboard.press("Tab")
    assert.strictEqual(await page.evaluate("document.activeElement.textContent"), "Skip to content")
    await page.keyboard.press("Enter")
    assert.strictEqual(await page.evaluate("document.activeElement.id"), "main")
    assert.strictEqual(new URL(page.url()).hash, "")
    await until("the live stream", async () => (await page.getByTestId("live").textContent()) === "live")
    const cookies = await page.context().cookies()
    const session = cookies.find((c) => c.name === "ocs_session")
    assert.ok(session, "a session cookie")
    assert.strictEqual(session.httpOnly, true)
    assert.strictEqual(session.sameSite, "Strict")
    assert.strictEqual(await page.evaluate("document.cookie"), "", "the page's script cannot read the cookie")
    // Rates need two snapshots.
    await until("a webhook rate", async () => (await page.getByTestId("webhook-rate").textContent()) !== "–")
    await shoot("overview")
  })

  it("charts the webhooks the test sent, and a reload keeps the history", async () => {
    // One webhook sent six times: one record, five redeliveries answered as duplicates. The
    // demo's own activity sends no redelivery, so the chart's duplicates are the test's.
    const demo = await servers.control.demo()
    const total = async () => Number(await page.getByTestId("chart-webhooks-duplicates").getAttribute("data-total"))
    await page.getByTestId("chart-webhooks-duplicates").waitFor()
    const before = await total()
    const body = JSON.stringify({ event: "productUpdate", businessId: Number(demo.businessId), data: { id: 990000001, name: "chart probe", updatedAt: 1767323045 } })
    const answers: Array<number> = []
    for (let i = 0; i < 6; i++) {
      const r = await fetch(`${servers.server.url}/webhooks/${demo.appId}`, { method: "POST", headers: { "content-type": "application/json", authorization: demo.verifyToken }, body })
      answers.push(r.status)
      await r.text()
    }
    assert.deepStrictEqual(answers, [200, 200, 200, 200, 200, 200])
    // The server samples every 5 s and the page reads every 10 s.
    await until("the chart to count the duplicates", async () => (await total()) === before + 5)
    const series = (await admin(servers, "/admin/series?range=hour")).body
    const sum = (name: string) => series.series[name].reduce((n: number, v: number | null) => n + (v ?? 0), 0)
    assert.strictEqual(sum("duplicates"), before + 5, "the chart shows what the server holds")
    assert.isAbove(sum("accepted"), 0)
    assert.strictEqual((await admin(servers, "/admin/series?range=week")).status, 400)
    // The chart draws a line, and a reload shows the same history (the server keeps it).
    assert.isAbove(await page.locator("[data-testid=chart-webhooks] polyline").count(), 0)
    await page.reload()
    await page.getByTestId("chart-webhooks-duplicates").waitFor()
    assert.strictEqual(await total(), before + 5)
    // The day's chart (1 min buckets) holds them too.
    await page.getByRole("button", { name: "last day" }).click()
    await until("the day chart", async () => (await page.getByRole("button", { name: "last day" }).getAttribute("aria-pressed")) === "true" && (await total()) === before + 5)
    await page.getByRole("button", { name: "last hour" }).click()
    await shoot("overview")
  })

  it("finds the demo tenant and watches its sync progress move", async () => {
    await page.getByRole("link", { name: "Tenants" }).click()
    await page.getByRole("searchbox").fill(servers.demo.businessId)
    const link = page.getByRole("link", { name: `${servers.demo.appId}:${servers.demo.businessId}` })
    await link.waitFor()
    await shoot("tenants")
    await link.click()
    await page.getByTestId("pages-total").waitFor()
    const before = Number(await page.getByTestId("pages-total").textContent())
    // A full sync reads every resource again; the page follows it through the live stream.
    await page.getByRole("button", { name: "Full sync" }).click()
    await until("pages pulled to grow", async () => Number(await page.getByTestId("pages-total").textContent()) > before)
    await page.getByRole("status").filter({ hasText: /Sync ran: [1-9]\d* pages/ }).waitFor()
    // The passes the sampler saw (every 5 s), per resource, with when the next one is due.
    const series = `/admin/tenants/${servers.demo.appId}/${servers.demo.businessId}/series`
    const seen = await adminWhen(servers, series, (r) => r.body.resources.some((x: any) => x.passes.length > 0 && x.passes.at(-1).pages > 0))
    const resource = seen.body.resources.find((x: any) => x.passes.length > 0 && x.passes.at(-1).pages > 0)
    assert.isNotNull(resource.lastFullMs, "a full pass completed, so its duration is known")
    assert.isNumber(resource.nextDueAt)
    const row = page.locator(`[data-testid=sync-over-time] tr[data-resource="${resource.resource}"]`)
    await until("the page to chart the passes", async () => Number(await row.locator("[data-passes]").getAttribute("data-passes")) >= resource.passes.length)
    assert.match((await row.textContent()) ?? "", /due now|in \d/)
    await shoot("tenant")
  })

  it("pauses and resumes the tenant", async () => {
    const path = `/admin/tenants/${servers.demo.appId}/${servers.demo.businessId}`
    await page.getByRole("button", { name: "Pause" }).click()
    await until("the page to show paused", async () => (await page.getByTestId("tenant-status").textContent()) === "paused")
    assert.strictEqual((await admin(servers, path)).body.status, "paused", "the server has it paused")
    await page.getByRole("button", { name: "Resume" }).click()
    await until("the page to show active", async () => (await page.getByTestId("tenant-status").textContent()) === "active")
    assert.strictEqual((await admin(servers, path)).body.status, "active")
  })

  it("shows which tenant needs attention, why, and what to do", async () => {
    // A second business whose token the service no longer accepts.
    const t = await servers.control.createTenant({ products: 5 })
    await servers.control.expireToken(t.token.accessToken)
    const post = (path: string, body: unknown) =>
      fetch(`${servers.server.url}${path}`, { method: "POST", headers: { "x-admin-key": ADMIN_KEY, "content-type": "application/json" }, body: JSON.stringify(body) })
    assert.strictEqual((await post("/admin/apps", { appId: t.app.appId, verifyTokens: [t.app.verifyToken] })).status, 201)
    assert.strictEqual((await post("/admin/tenants", { appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken })).status, 201)
    await admin(servers, `/admin/tenants/${t.app.appId}/${t.business.businessId}/sync`, "POST")
    await page.getByRole("link", { name: "Overview" }).click()
    const item = page.locator("ul.list li").filter({ hasText: `${t.app.appId}:${t.business.businessId}` })
    await item.waitFor()
    assert.include(await item.textContent(), "attention")
    await item.getByRole("link").click()
    const alert = page.getByRole("alert").filter({ hasText: "Needs attention" })
    await alert.waitFor()
    const text = (await alert.textContent()) ?? ""
    assert.include(text, "ERR_INVALID_ACCESS_TOKEN")
    assert.include(text, "grant access again", "what to do")
    await shoot("tenant-attention")
  })

  it("shows a lock counting down after a forced 429", async () => {
    // One call per minute: the server's next calls are answered ERR_429 with a 40 s lock.
    await servers.control.setRateLimits({ limit: 1, windowMs: 60_000, lockMs: 40_000, lockGrowthMs: 0, maxLockMs: 40_000 })
    try {
      // A full sync of the tenant calls every resource now (not awaited: it waits out the lock).
      const sync = admin(servers, `/admin/tenants/${servers.demo.appId}/${servers.demo.businessId}/sync?full=true`, "POST").catch(() => undefined)
      await page.getByRole("link", { name: "Rate limits" }).click()
      const countdown = page.locator("tr.locked .countdown").first()
      await countdown.waitFor({ timeout: 45_000 })
      const first = Number(await countdown.getAttribute("data-seconds"))
      assert.ok(first > 0, `a lock with time left, got ${first}`)
      await shoot("rate-limits")
      await until("the countdown to go down", async () => {
        const now = Number(await page.locator("tr.locked .countdown").first().getAttribute("data-seconds"))
        return now > 0 && now < first
      })
      void sync
    } finally {
      await servers.control.resetRateLimits()
    }
  })

  it("opens an entity's history with each record's exact stored body", async () => {
    await page.getByRole("link", { name: "Events" }).click()
    await page.getByLabel("Tenant").selectOption(`${servers.demo.appId}:${servers.demo.businessId}`)
    const product = page.locator(".suggest a").first()
    await product.waitFor()
    const id = (await product.textContent())!.trim()
    await product.click()
    const first = page.locator("ol.history > li").first()
    await first.waitFor()
    await first.locator("summary").click()
    const shown = await first.locator("pre.body").textContent()
    const history = await admin(servers, `/admin/tenants/${servers.demo.appId}/${servers.demo.businessId}/history/${id}`)
    assert.ok(history.body.records.length >= 1)
    assert.strictEqual(shown, history.body.records[0].body, "the page shows the body as the log stores it")
    await shoot("events")
  })

  it("the data explorer finds an order by status and date, and opens its lines and history", async () => {
    const tenant = `${servers.demo.appId}:${servers.demo.businessId}`
    const base = `/admin/tenants/${servers.demo.appId}/${servers.demo.businessId}`
    const all = await adminWhen(servers, `${base}/orders?limit=1000`, (r) => r.body.items.some((o: any) => o.lineCount > 0 && o.createdAtMs !== null && o.status !== null))
    const target = all.body.items.find((o: any) => o.lineCount > 0 && o.createdAtMs !== null && o.status !== null)
    // The day of its creation as the browser (the form's date field) names it.
    const day = String(await page.evaluate(`(() => { const d = new Date(${target.createdAtMs}); return d.getFullYear() + "-" + String(d.getMonth() + 1).padStart(2, "0") + "-" + String(d.getDate()).padStart(2, "0") })()`))
    const bounds = await page.evaluate(`[new Date("${day}T00:00:00").getTime(), new Date("${day}T23:59:59.999").getTime()]`) as [number, number]
    const expected = (await admin(servers, `${base}/orders?limit=50&status=${target.status}&createdFromMs=${bounds[0]}&createdToMs=${bounds[1]}`)).body.items
    assert.ok(expected.some((o: any) => o.id === target.id))
    await page.goto(`${servers.server.url}/ui#/data?tenant=${tenant}&kind=orders`)
    await page.getByTestId("data-table").waitFor()
    await page.getByLabel("Status").selectOption(String(target.status))
    await page.getByLabel("Created from").fill(day)
    await page.getByLabel("Created to").fill(day)
    await page.getByLabel("Created to").press("Enter")
    await until("the filtered list", async () => {
      const ids = await page.locator("[data-testid=data-table] tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-id")))
      return JSON.stringify(ids) === JSON.stringify(expected.map((o: any) => o.id))
    })
    assert.include(new URL(page.url()).hash, `status=${target.status}`, "the filters are in the address")
    await shoot("data-orders")
    await page.locator(`tr[data-id="${target.id}"] a`).click()
    await page.getByTestId("record-status").waitFor()
    const detail = (await admin(servers, `${base}/orders/${target.id}`)).body
    assert.strictEqual(await page.locator("[data-testid=lines] tbody tr").count(), detail.items.length)
    assert.isAbove(detail.items.length, 0)
    const history = page.locator("[data-testid=record-history] > li")
    await history.first().waitFor()
    const logged = (await admin(servers, `${base}/history/${target.id}`)).body
    assert.strictEqual(await history.count(), logged.records.length)
    await history.first().locator("summary").click()
    assert.strictEqual(await history.first().locator("pre.body").textContent(), logged.records[0].body, "the body exactly as stored")
    await shoot("data-order")
  })

  it("the data explorer finds a product by barcode, and shows a tombstone only on request", async () => {
    const tenant = `${servers.demo.appId}:${servers.demo.businessId}`
    const base = `/admin/tenants/${servers.demo.appId}/${servers.demo.businessId}`
    const listed = (await adminWhen(servers, `${base}/products?limit=200`, (r) => r.body.items.filter((p: any) => p.barcode).length >= 2)).body.items
    // The first by id is on the explorer's first page, with or without tombstones.
    const gone = listed[0]
    const found = listed.find((p: any) => p.barcode && p.id !== gone.id)
    await page.goto(`${servers.server.url}/ui#/data?tenant=${tenant}&kind=products`)
    await page.getByLabel("Name, code or barcode").fill(found.barcode)
    // The live snapshot re-renders the page once a second: what was typed stays.
    await page.waitForTimeout(2_200)
    assert.strictEqual(await page.getByLabel("Name, code or barcode").inputValue(), found.barcode, "the filter's text across re-renders")
    await page.getByLabel("Name, code or barcode").press("Enter")
    await until("the product found by its barcode", async () => (await page.locator(`[data-testid=data-table] tr[data-id="${found.id}"]`).count()) === 1)
    assert.include(await page.locator(`tr[data-id="${found.id}"]`).textContent(), found.barcode)
    // Its record: stock per depot and the stored record.
    await page.locator(`tr[data-id="${found.id}"] a`).click()
    await page.getByRole("heading", { name: "Stock per depot" }).waitFor()
    await page.locator("[data-testid=record-history] > li").first().waitFor()
    // A product the business deletes: its webhook leaves a tombstone (no name, code or barcode
    // any more), hidden unless asked for.
    await servers.control.deleteProduct(servers.demo.businessId, gone.id)
    await adminWhen(servers, `${base}/products/${gone.id}`, (r) => r.body.deleted === true)
    await page.goto(`${servers.server.url}/ui#/data?tenant=${tenant}&kind=products`)
    await page.getByTestId("data-table").waitFor()
    assert.strictEqual(await page.locator(`[data-testid=data-table] tr[data-id="${gone.id}"]`).count(), 0, "no tombstone unless asked for")
    await page.getByLabel("with deleted (tombstones)").check()
    await page.waitForTimeout(2_200)
    assert.isTrue(await page.getByLabel("with deleted (tombstones)").isChecked(), "the box stays ticked across re-renders")
    await page.getByRole("button", { name: "Show" }).click()
    const row = page.locator(`[data-testid=data-table] tr.deleted[data-id="${gone.id}"]`)
    await row.waitFor()
    assert.include(await row.textContent(), "deleted")
    await shoot("data-tombstone")
    await row.locator("a").click()
    await page.getByTestId("record-facts").filter({ hasText: "a tombstone" }).waitFor()
  })

  it("says so when a list is empty or a request fails", async () => {
    const tenant = `${servers.demo.appId}:${servers.demo.businessId}`
    await page.goto(`${servers.server.url}/ui#/tenants?status=paused`)
    await page.locator("p.empty").filter({ hasText: "No tenants here" }).waitFor()
    await page.goto(`${servers.server.url}/ui#/events?tenant=${tenant}&entity=987654321987`)
    await page.locator("p.empty").filter({ hasText: "No record of this tenant mentions 987654321987" }).waitFor()
    await page.goto(`${servers.server.url}/ui#/events?tenant=${tenant}&entity=abc`)
    await page.getByRole("alert").filter({ hasText: "entityId must be a positive integer" }).waitFor()
    await page.goto(`${servers.server.url}/ui#/data?tenant=${tenant}&kind=orders&saleChannel=abc`)
    await page.getByRole("alert").filter({ hasText: "saleChannel must be a numeric code" }).waitFor()
    await page.goto(`${servers.server.url}/ui#/data?tenant=${tenant}&kind=customers&mobile=0000000001`)
    await page.locator("p.empty").filter({ hasText: "No customers match" }).waitFor()
    // No command asked yet for the demo (the commands tests come later), and one that does not exist.
    await page.goto(`${servers.server.url}/ui#/tenants/${servers.demo.appId}/${servers.demo.businessId}/commands`)
    await page.locator("p.empty").filter({ hasText: "No command has been asked for this tenant yet" }).waitFor()
    await page.goto(`${servers.server.url}/ui#/tenants/${servers.demo.appId}/${servers.demo.businessId}/commands/no-such-command`)
    await page.getByRole("alert").filter({ hasText: "no such command for this tenant" }).waitFor()
    await page.goto(`${servers.server.url}/ui#/nowhere`)
    await page.getByRole("heading", { name: "Not found" }).waitFor()
  })

  it("redrives a dead letter", async () => {
    // The forwarder's receiver fails: the demo's new orders end as dead letters.
    await until("a dead letter", async () => (await admin(servers, "/admin/plugins/dead-letters")).body.deadLetters.length > 0, 60_000)
    servers.receiver.failing = false
    await page.getByRole("link", { name: "Plugins" }).click()
    const row = page.locator("tr[data-dead-letter]").first()
    await row.waitFor()
    const id = Number(await row.getAttribute("data-dead-letter"))
    await shoot("plugins")
    await row.getByRole("button", { name: "Redrive" }).click()
    await page.getByRole("status").filter({ hasText: "Re-driven: 1 handled" }).waitFor()
    await until("the dead letter to leave the list", async () => (await page.locator(`tr[data-dead-letter="${id}"]`).count()) === 0)
    const left = (await admin(servers, "/admin/plugins/dead-letters")).body.deadLetters
    assert.ok(!left.some((d: any) => d.id === id), "the server no longer holds it")
  })

  it("connects a business through the grant flow: two of three depots, one permission left out and never called", async () => {
    const demo = await servers.control.demo()
    const url = servers.server.url
    const keyed = await fetch(`${url}/admin/apps`, {
      method: "POST",
      headers: { "x-admin-key": ADMIN_KEY, "content-type": "application/json" },
      body: JSON.stringify({ appId: demo.appId, verifyTokens: [demo.verifyToken], secretKey: demo.secretKey, publicUrl: url })
    })
    assert.strictEqual(keyed.status, 201)
    const shop = await servers.control.createBusiness({ products: 120, orders: 10, bills: 5, customers: 5, depots: [1, 2, 3] })
    const businessId = String(shop.businessId)
    // The console shows the link to send; the business opens it.
    await page.getByRole("link", { name: "Connect" }).click()
    const link = page.getByTestId("connect-link")
    await link.waitFor()
    assert.strictEqual(await link.textContent(), `${url}/connect/${demo.appId}`)
    await shoot("connect")
    await page.goto(`${url}/connect/${demo.appId}`)
    // The simulator's grant page: this business, permissions without customers, depots 1 and 2.
    await page.waitForSelector("form[method=post]")
    await page.fill("input[name=businessId]", businessId)
    await page.uncheck("input[name=permissions][value=customer]")
    await page.uncheck("input[name=depotIds][value='3']")
    await page.getByRole("button", { name: "Grant access" }).click()
    await page.getByRole("heading", { name: "Your shop is connected" }).waitFor()
    const tenant = `/admin/tenants/${demo.appId}/${businessId}`
    assert.strictEqual((await admin(servers, tenant)).body.status, "active")
    const stock = await adminWhen(servers, `${tenant}/inventory?limit=1000`, (r) => r.status === 200 && r.body.items.length > 0)
    assert.deepStrictEqual([...new Set(stock.body.items.map((i: any) => String(i.depotId)))].filter((d) => d !== "").sort(), ["1", "2"])
    const settings = (await admin(servers, `${tenant}/settings`)).body
    assert.deepStrictEqual(settings.notGranted.map((n: any) => n.permission), ["customer"])
    const calls = (await servers.control.calls({ businessId })).calls
    assert.strictEqual(calls.filter((c) => c.outcome === "ERR_403").length, 0, "a resource not granted is never called")
    assert.strictEqual(calls.filter((c) => c.operation === "customer/list").length, 0)
    await page.goto(`${url}/ui#/connect`)
    await page.getByTestId("grants").getByRole("link", { name: `${demo.appId}:${businessId}` }).waitFor()
  })

  // Two customer.add whose answers the simulator loses after applying them, while customer/list
  // cannot be read back (it answers what is not JSON): the engine cannot tell, and leaves both in
  // doubt for a person.
  const doubtful = [{ name: "Lan Console", mobile: "0987650001" }, { name: "Minh Console", mobile: "0987650002" }]
  const products = [1, 2, 3].map((i) => ({ appProductId: `CONSOLE-${i}`, name: `Console product ${i}`, price: 15_000 * i }))
  const doubtIds: Array<string> = []

  it("the commands page counts a tenant's commands by state and filters them by state and kind", async () => {
    const { appId, businessId } = servers.demo
    const base = `/admin/tenants/${appId}/${businessId}`
    const faults = await Promise.all([
      servers.control.addFault({ kind: "lostAnswer", operation: "customer/add", businessId, count: 2 }),
      servers.control.addFault({ kind: "malformed", variant: "nonJson", operation: "customer/list", businessId })
    ])
    try {
      const asked = await Promise.all(doubtful.map((p, i) => askCommand(servers, `console-doubt-${i}`, "customer.add", p)))
      doubtIds.push(...asked.map((c) => c.id))
      const added = await Promise.all(products.map((p) => askCommand(servers, `console-${p.appProductId}`, "product.add", p)))
      // While the engine reads back, the tenant page already counts them.
      await page.goto(`${servers.server.url}/ui#/tenants/${appId}/${businessId}`)
      await page.getByTestId("command-counts").waitFor()
      for (const id of [...doubtIds, ...added.map((c) => c.id)]) {
        await adminWhen(servers, `${base}/commands/${id}`, (r) => r.body.state === "confirmed" || (r.body.state === "inDoubt" && r.body.reason?.tag === "ReadBackFailed"))
      }
    } finally {
      await Promise.all(faults.map((f) => servers.control.removeFault(f.id).catch(() => undefined)))
    }
    const listed = (await admin(servers, `${base}/commands`)).body
    assert.strictEqual(listed.counts.byState.inDoubt, 2)
    assert.strictEqual(listed.counts.byState.confirmed, 3)
    const count = (state: string) => page.locator(`[data-testid=command-counts] [data-count=${state}] b`)
    await until("the tenant page's counts", async () => (await count("inDoubt").textContent()) === "2" && (await count("confirmed").textContent()) === "3")
    assert.strictEqual(await count("flagged").textContent(), "0")
    // A count opens the list of its state.
    await page.locator("[data-testid=command-counts] [data-count=inDoubt]").click()
    const rows = () => page.locator("[data-testid=commands-table] tbody tr").evaluateAll((trs) => trs.map((r) => r.getAttribute("data-command")))
    await until("the in-doubt ones", async () => JSON.stringify((await rows()).sort()) === JSON.stringify([...doubtIds].sort()))
    assert.include(new URL(page.url()).hash, "state=inDoubt", "the filter is in the address")
    // The kind filter, any state: the three product.add.
    await page.locator("select[name=state]").selectOption("")
    await page.locator("select[name=kind]").selectOption("product.add")
    await page.getByRole("button", { name: "Show" }).click()
    const expected = (await admin(servers, `${base}/commands?kind=product.add`)).body.items.map((c: { id: string }) => c.id)
    assert.strictEqual(expected.length, 3)
    await until("the product.add ones", async () => JSON.stringify((await rows()).sort()) === JSON.stringify([...expected].sort()))
    for (const id of expected) assert.include(await page.locator(`tr[data-command="${id}"]`).textContent(), "confirmed")
    await page.getByLabel("only flagged").check()
    await page.getByRole("button", { name: "Show" }).click()
    await page.locator("p.empty").filter({ hasText: "No command matches these filters" }).waitFor()
    await page.goto(`${servers.server.url}/ui#/tenants/${appId}/${businessId}/commands`)
    await until("every command", async () => (await rows()).length === listed.total)
    await shoot("commands")
  })

  it("a command in doubt shows what was sent and what the engine saw; a person marks one done and sends the other again", async () => {
    const { appId, businessId } = servers.demo
    const base = `/admin/tenants/${appId}/${businessId}`
    const [first, second] = doubtIds as [string, string]
    const before = (await admin(servers, `${base}/commands/${first}`)).body
    await page.goto(`${servers.server.url}/ui#/tenants/${appId}/${businessId}/commands?state=inDoubt`)
    await page.locator(`tr[data-command="${first}"] a`).click()
    await page.getByTestId("in-doubt").waitFor()
    assert.strictEqual(await page.getByTestId("evidence").textContent(), before.evidence, "what the engine saw, as it recorded it")
    assert.match(before.evidence, /customer\/list/)
    const payload = doubtful.find((p) => p.mobile === before.payload.mobile)
    assert.strictEqual(await page.getByTestId("sent").textContent(), JSON.stringify([payload], null, 2), "the request body, indented")
    assert.deepStrictEqual(await page.locator("[data-testid=transitions] .badge").allTextContents(), ["requested", "sent", "inDoubt", "inDoubt"])
    const demo = await servers.control.demo()
    assert.notInclude(await page.content(), demo.accessToken, "no secret on the page")
    await shoot("command-in-doubt")
    // Mark done, with the service's id: a confirmation step first.
    await page.getByRole("button", { name: "Mark done…" }).click()
    await page.getByLabel("The service's id of the effect").fill("5550001")
    await page.getByLabel("Note").fill("seen in the back office")
    await page.getByRole("alert").filter({ hasText: "Mark it done? The engine will not send it again" }).waitFor()
    await page.getByRole("button", { name: "Yes, mark done" }).click()
    await page.getByTestId("decision-message").filter({ hasText: "Marked done" }).waitFor()
    await until("the page to show it confirmed", async () => (await page.getByTestId("command-state").textContent()) === "confirmed")
    assert.strictEqual(await page.getByTestId("command-entity").textContent(), "5550001")
    assert.strictEqual(await page.getByTestId("in-doubt").count(), 0, "no decision left to take")
    const done = (await admin(servers, `${base}/commands/${first}`)).body
    assert.deepStrictEqual([done.state, done.confirmedBy, done.entityId, done.attempts], ["confirmed", "person", "5550001", before.attempts])
    // The other: sent again after a "Back" and a second thought; the service answers this time.
    await page.goto(`${servers.server.url}/ui#/tenants/${appId}/${businessId}/commands/${second}`)
    await page.getByRole("button", { name: "Send again…" }).click()
    await page.getByRole("button", { name: "Back" }).click()
    await page.getByRole("button", { name: "Send again…" }).click()
    await page.getByRole("alert").filter({ hasText: "sending again makes the effect twice" }).waitFor()
    await page.getByRole("button", { name: "Yes, send again" }).click()
    await until("the page to show it confirmed", async () => (await page.getByTestId("command-state").textContent()) === "confirmed", 30_000)
    const retried = (await admin(servers, `${base}/commands/${second}`)).body
    assert.strictEqual(retried.state, "confirmed")
    assert.strictEqual(retried.attempts, 2)
    assert.strictEqual(await page.getByTestId("command-attempts").textContent(), "2")
    await until("the answer of the second attempt", async () => (await page.locator("[data-testid=transitions] .badge").allTextContents()).includes("retried") &&
      (await page.getByTestId("answer").count()) === 1)
    // The answer's exact body, indented: the same JSON, laid out on several lines.
    const shown = (await page.getByTestId("answer").locator("pre.body").textContent())!
    assert.deepStrictEqual(JSON.parse(shown), JSON.parse(retried.lastAnswer))
    assert.include(shown, "\n  ")
    const counts = (await admin(servers, `${base}/commands`)).body.counts.byState
    assert.deepStrictEqual([counts.inDoubt, counts.confirmed], [0, 5])
  })

  it("asks for a command from the form: a refused payload named field by field, an accepted one opens and ends confirmed, its key reused is refused", async () => {
    const { appId, businessId } = servers.demo
    const base = `/admin/tenants/${appId}/${businessId}`
    const total = async () => (await admin(servers, `${base}/commands`)).body.total as number
    const before = await total()
    await page.goto(`${servers.server.url}/ui#/tenants/${appId}/${businessId}/commands`)
    const form = page.getByTestId("command-form")
    await form.getByText("Ask for a command…").click()
    const payload = form.getByLabel(/^Payload/)
    const key = form.getByLabel("Idempotency key")
    const send = form.getByRole("button", { name: "Send the command" })
    const refusal = form.getByTestId("command-form-refusal")
    // Each kind starts from a valid example of its own.
    await form.getByLabel("Kind").selectOption("customer.add")
    const example = JSON.parse(await payload.inputValue())
    assert.deepStrictEqual(Object.keys(example).slice(0, 2), ["name", "mobile"])
    assert.match(await key.inputValue(), /^console-[0-9a-f]{10}$/)
    // A payload the server refuses: each field at fault named, nothing stored.
    await payload.fill(JSON.stringify({ mobile: "not a phone", email: "binh@example.com" }, null, 2))
    await send.click()
    await refusal.waitFor()
    assert.strictEqual(await refusal.getAttribute("data-status"), "400")
    const paths = await refusal.locator("li").evaluateAll((lis) => lis.map((l) => l.getAttribute("data-path")))
    assert.includeMembers(paths, ["payload.name", "payload.mobile"])
    assert.include(await refusal.textContent(), "Refused, nothing was stored")
    assert.strictEqual(await total(), before)
    await shoot("command-form")
    // The product.add example as it stands, with the key the form made: sent, opened, confirmed.
    await form.getByLabel("Kind").selectOption("product.add")
    assert.strictEqual(await refusal.count(), 0, "a new kind clears the refusal")
    const sent = JSON.parse(await payload.inputValue())
    const usedKey = await key.inputValue()
    await send.click()
    await page.waitForURL(/\/commands\/[^/?]+$/)
    const id = decodeURIComponent(new URL(page.url()).hash.split("/").pop()!)
    await until("the asked command confirmed", async () => (await page.getByTestId("command-state").textContent()) === "confirmed", 30_000)
    const asked = (await admin(servers, `${base}/commands/${id}`)).body
    assert.deepStrictEqual([asked.kind, asked.idempotencyKey, asked.requestedBy.type, asked.state], ["product.add", usedKey, "console", "confirmed"])
    assert.deepStrictEqual(asked.payload, sent)
    assert.strictEqual(await total(), before + 1)
    // The same key with another payload: refused, with the way to the command it names.
    await page.goto(`${servers.server.url}/ui#/tenants/${appId}/${businessId}/commands`)
    await form.getByText("Ask for a command…").click()
    await payload.fill(JSON.stringify({ ...sent, price: sent.price + 1 }))
    await key.fill(usedKey)
    await send.click()
    await refusal.waitFor()
    assert.strictEqual(await refusal.getAttribute("data-status"), "409")
    assert.strictEqual(await refusal.getByRole("link", { name: "open that command" }).getAttribute("href"), `#/tenants/${appId}/${businessId}/commands/${encodeURIComponent(id)}`)
    assert.strictEqual(await total(), before + 1)
  })

  it("shows a tenant's page service: its granted page, the conversations newest first, a conversation's messages", async () => {
    const t = await servers.control.createTenant({ products: 3, orders: 0, bills: 0, customers: 0, conversationsPerPage: 5 })
    const post = (path: string, body: unknown) =>
      fetch(`${servers.server.url}${path}`, { method: "POST", headers: { "x-admin-key": ADMIN_KEY, "content-type": "application/json" }, body: JSON.stringify(body) })
    assert.strictEqual((await post("/admin/apps", { appId: t.app.appId, verifyTokens: [t.app.verifyToken] })).status, 201)
    // A grant naming one page of the business's three.
    const tenant = { appId: t.app.appId, businessId: t.business.businessId, accessToken: t.token.accessToken, pages: ["1000000002"] }
    assert.strictEqual((await post("/admin/tenants", tenant)).status, 201)
    const base = `/admin/tenants/${t.app.appId}/${t.business.businessId}`
    await admin(servers, `${base}/sync`, "POST")
    await adminWhen(servers, `${base}/vpage/customers`, (r) => r.status === 200 && r.body.items.length === 5)
    await page.goto(`${servers.server.url}/ui#/page-service?tenant=${t.app.appId}:${t.business.businessId}`)
    await page.getByTestId("vpage-pages").locator("tr[data-id='1000000002']").waitFor()
    assert.strictEqual(await page.getByTestId("vpage-pages").locator("tbody tr").count(), 1, "only the granted page")
    const rows = page.getByTestId("vpage-conversations").locator("tbody tr")
    await until("five conversations", async () => (await rows.count()) === 5)
    await rows.first().getByRole("link").click()
    const messages = page.getByTestId("vpage-messages").locator("li")
    await until("the conversation's messages", async () => (await messages.count()) >= 20)
    await shoot("page-service")
  })

  it("reads on a phone width", async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    for (const [hash, name] of [["#/", "overview"], [`#/tenants/${servers.demo.appId}/${servers.demo.businessId}`, "tenant"], ["#/limits", "rate-limits"],
      [`#/data?tenant=${servers.demo.appId}:${servers.demo.businessId}&kind=orders`, "data"],
      [`#/tenants/${servers.demo.appId}/${servers.demo.businessId}/commands`, "commands"],
      [`#/tenants/${servers.demo.appId}/${servers.demo.businessId}/commands/${doubtIds[1]}`, "command"]] as const) {
      await page.goto(`${servers.server.url}/ui${hash}`)
      await page.locator("main h1").waitFor()
      // Nothing wider than the screen: wide tables scroll inside their own box.
      const overflow = Number(await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))
      assert.ok(overflow <= 0, `${name}: the page is ${overflow}px wider than the phone`)
      await shoot(`${name}-phone`)
    }
  })
})
