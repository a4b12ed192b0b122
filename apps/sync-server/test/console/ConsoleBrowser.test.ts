/**
 * The operator console in real Chromium (Debian's package; playwright-core drives it) against
 * the servers `./ocs start` runs: sign in by keyboard, find the demo tenant, watch its sync
 * move, pause and resume it, see a lock count down after a forced 429, open an entity's
 * history, redrive a dead letter, connect a business through the grant flow. Each page is photographed at a laptop and a phone width;
 * with OCS_UPDATE_SCREENSHOTS=1 the pictures replace those in docs/console/.
 */
import { afterAll, assert, beforeAll, describe, inject, it } from "vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"
import { ADMIN_KEY, admin, adminWhen, type Servers, startServers } from "./servers.ts"

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

  it("says so when a list is empty or a request fails", async () => {
    const tenant = `${servers.demo.appId}:${servers.demo.businessId}`
    await page.goto(`${servers.server.url}/ui#/tenants?status=paused`)
    await page.locator("p.empty").filter({ hasText: "No tenants here" }).waitFor()
    await page.goto(`${servers.server.url}/ui#/events?tenant=${tenant}&entity=987654321987`)
    await page.locator("p.empty").filter({ hasText: "No record of this tenant mentions 987654321987" }).waitFor()
    await page.goto(`${servers.server.url}/ui#/events?tenant=${tenant}&entity=abc`)
    await page.getByRole("alert").filter({ hasText: "entityId must be a positive integer" }).waitFor()
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

  it("reads on a phone width", async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    for (const [hash, name] of [["#/", "overview"], [`#/tenants/${servers.demo.appId}/${servers.demo.businessId}`, "tenant"], ["#/limits", "rate-limits"]] as const) {
      await page.goto(`${servers.server.url}/ui${hash}`)
      await page.locator("main h1").waitFor()
      // Nothing wider than the screen: wide tables scroll inside their own box.
      const overflow = Number(await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))
      assert.ok(overflow <= 0, `${name}: the page is ${overflow}px wider than the phone`)
      await shoot(`${name}-phone`)
    }
  })
})
