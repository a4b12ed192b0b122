import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Json from "@ocs/protocol/Json"
import type { RunningSimulator } from "../src/index.ts"
import { call, type Caller, start } from "./helpers.ts"

/** The form's fields as a browser posts them: hidden and text inputs, checked checkboxes. */
const formFields = (html: string): Array<[string, string]> => {
  const fields: Array<[string, string]> = []
  for (const m of html.matchAll(/<input ([^>]*)>/g)) {
    const attrs = m[1]!
    const name = /name="([^"]*)"/.exec(attrs)?.[1]
    const value = /value="([^"]*)"/.exec(attrs)?.[1] ?? ""
    if (name === undefined) continue
    if (/type="checkbox"/.test(attrs) && !/\bchecked\b/.test(attrs)) continue
    fields.push([name, value.replace(/&amp;/g, "&").replace(/&quot;/g, "\"")])
  }
  return fields
}

const RETURN = "http://127.0.0.1:9/back?from=test"

const grantPage = (sim: RunningSimulator, appId: string, returnLink = RETURN, version = "3.0") =>
  fetch(`${sim.url}/oauth?version=${version}&appId=${appId}&returnLink=${encodeURIComponent(returnLink)}`)

/** Posts the grant form; `edit` changes the fields first. Answers the access code of the 302. */
const grant = async (
  sim: RunningSimulator,
  appId: string,
  edit: (fields: Array<[string, string]>) => Array<[string, string]> = (f) => f
): Promise<string> => {
  const html = await (await grantPage(sim, appId)).text()
  const res = await fetch(`${sim.url}/oauth`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(edit(formFields(html))).toString()
  })
  assert.strictEqual(res.status, 302, await res.text())
  const location = new URL(res.headers.get("location")!)
  assert.strictEqual(location.origin + location.pathname, "http://127.0.0.1:9/back")
  assert.strictEqual(location.searchParams.get("from"), "test", "the return link's own query is kept")
  return location.searchParams.get("accessCode")!
}

const exchange = async (sim: RunningSimulator, appId: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${sim.posBaseUrl}/v3.0/app/getaccesstoken?appId=${appId}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })
  const parsed = Json.parse(await res.text())
  return parsed._tag === "Success" ? (parsed.success as any) : undefined
}

describe("the grant flow", () => {
  let sim: RunningSimulator
  let demo: Caller & { secretKey: string }
  beforeAll(async () => {
    sim = await start({ products: 120, orders: 30, bills: 10, customers: 10, tokenOverlapMs: 300 })
    demo = sim.demo!
  })
  afterAll(() => sim.close())

  it("serves a plain form, checked by default, that grants everything when posted as served", async () => {
    const res = await grantPage(sim, demo.appId)
    assert.strictEqual(res.status, 200)
    const html = await res.text()
    assert.match(html, /<form method="post"/)
    const fields = formFields(html)
    assert.deepStrictEqual(fields.filter(([k]) => k === "businessId"), [["businessId", demo.businessId]])
    assert.deepStrictEqual(fields.filter(([k]) => k === "depotIds").map(([, v]) => v), ["1", "2", "3"])
    assert.isAbove(fields.filter(([k]) => k === "permissions").length, 4)

    const accessCode = await grant(sim, demo.appId)
    const answer = await exchange(sim, demo.appId, { accessCode, secretKey: demo.secretKey })
    assert.strictEqual(answer.code, 1, JSON.stringify(answer))
    assert.strictEqual(String(answer.data.businessId), demo.businessId)
    assert.deepStrictEqual(answer.data.depotIds.map(Number), [1, 2, 3])
    assert.includeMembers(answer.data.permissions, ["product", "order", "inventory", "bill", "customer"])
    assert.deepStrictEqual(answer.data.pageIds, [])
    const inAYear = Date.now() / 1000 + 365 * 24 * 3600
    assert.approximately(Number(answer.data.expiredAt), inAYear, 60)
    const who = { ...demo, accessToken: answer.data.accessToken }
    assert.strictEqual((await call(sim, who, "order/list", {})).json.code, 1)
  })

  it("enforces the grant's permissions (ERR_403) and depots (ERR_INVALID_DEPOT_ID); checkaccesstoken tells them", async () => {
    const accessCode = await grant(sim, demo.appId, (fields) =>
      fields.filter(([k, v]) => (k !== "permissions" || v === "product" || v === "inventory") && (k !== "depotIds" || v !== "3")))
    const answer = await exchange(sim, demo.appId, { accessCode, secretKey: demo.secretKey })
    assert.deepStrictEqual([...answer.data.permissions].sort(), ["inventory", "product"])
    const who = { ...demo, accessToken: answer.data.accessToken }
    assert.strictEqual((await call(sim, who, "product/list", {})).json.code, 1)
    assert.strictEqual((await call(sim, who, "order/list", {})).json.errorCode, "ERR_403")
    assert.strictEqual((await call(sim, who, "customer/list", {})).json.errorCode, "ERR_403")
    const inventory = await call(sim, who, "product/inventory", { filters: { depotIds: [1, 2] } })
    assert.strictEqual(inventory.json.code, 1, inventory.text.slice(0, 200))
    assert.strictEqual((await call(sim, who, "product/inventory", { filters: { depotIds: [3] } })).json.errorCode, "ERR_INVALID_DEPOT_ID")

    const check = await call(sim, who, "app/checkaccesstoken", { secretKey: demo.secretKey })
    assert.strictEqual(check.json.code, 1)
    assert.deepStrictEqual(check.json.data.depotIds.map(Number), [1, 2])
    assert.deepStrictEqual([...check.json.data.permissions].sort(), ["inventory", "product"])
    assert.strictEqual((await call(sim, who, "app/checkaccesstoken", { secretKey: "sk_wrong" })).json.errorCode, "ERR_INVALID_SECRET_KEY")
    assert.strictEqual((await call(sim, who, "app/checkaccesstoken", {})).json.errorCode, "ERR_INVALID_FORM_FIELDS")
  })

  it("an access code is single use; a wrong secret key is refused without spending it", async () => {
    const accessCode = await grant(sim, demo.appId)
    const wrong = await exchange(sim, demo.appId, { accessCode, secretKey: "sk_not_it" })
    assert.strictEqual(wrong.errorCode, "ERR_INVALID_SECRET_KEY")
    const missing = await exchange(sim, demo.appId, { accessCode })
    assert.strictEqual(missing.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.property(missing.messages, "secretKey")
    const other = await sim.control.createApp({ name: "Other" })
    const elsewhere = await exchange(sim, String(other.appId), { accessCode, secretKey: other.secretKey })
    assert.strictEqual(elsewhere.errorCode, "ERR_INVALID_ACCESS_CODE", "a code belongs to the app it was issued for")
    assert.strictEqual((await exchange(sim, demo.appId, { accessCode, secretKey: demo.secretKey })).code, 1)
    const replay = await exchange(sim, demo.appId, { accessCode, secretKey: demo.secretKey })
    assert.strictEqual(replay.errorCode, "ERR_INVALID_ACCESS_CODE")
    assert.strictEqual((await exchange(sim, "999", { accessCode, secretKey: demo.secretKey })).errorCode, "ERR_INVALID_APP_ID")
    const log = await sim.control.calls({ operation: "app/getaccesstoken" })
    assert.includeMembers(log.calls.map((c) => c.outcome), ["ERR_INVALID_SECRET_KEY", "ERR_INVALID_ACCESS_CODE", "ok"])
  })

  it("one live token per app and business: the old one works for the overlap, then not", async () => {
    const first = await exchange(sim, demo.appId, { accessCode: await grant(sim, demo.appId), secretKey: demo.secretKey })
    const second = await exchange(sim, demo.appId, { accessCode: await grant(sim, demo.appId), secretKey: demo.secretKey })
    const old = { ...demo, accessToken: first.data.accessToken }
    const fresh = { ...demo, accessToken: second.data.accessToken }
    assert.strictEqual((await call(sim, old, "product/list", {})).json.code, 1, "the old token works during the overlap")
    const check = await call(sim, old, "app/checkaccesstoken", { secretKey: demo.secretKey })
    assert.isAtMost(Number(check.json.data.expiredAt), Math.ceil((Date.now() + 300) / 1000))
    await new Promise((r) => setTimeout(r, 350))
    assert.strictEqual((await call(sim, old, "product/list", {})).json.errorCode, "ERR_INVALID_ACCESS_TOKEN")
    assert.strictEqual((await call(sim, fresh, "product/list", {})).json.code, 1)
  })

  it("refuses a grant page for an unknown app, another version or a return link that is not https", async () => {
    assert.strictEqual((await grantPage(sim, "999")).status, 400)
    assert.strictEqual((await grantPage(sim, demo.appId, RETURN, "2.0")).status, 400)
    const plain = await grantPage(sim, demo.appId, "http://shop.example/back")
    assert.strictEqual(plain.status, 400)
    assert.match(await plain.text(), /https/)
    const foreign = await fetch(`${sim.url}/oauth`, {
      method: "POST",
      redirect: "manual",
      body: new URLSearchParams({ version: "3.0", appId: demo.appId, returnLink: RETURN, businessId: demo.businessId, depotIds: "9" })
    })
    assert.strictEqual(foreign.status, 400)
  })
})

describe("access codes expire", () => {
  it("after their lifetime the exchange answers ERR_INVALID_ACCESS_CODE", async () => {
    const sim = await start({ products: 10, orders: 1, bills: 1, customers: 1, accessCodeLifetimeMs: 30 })
    try {
      const accessCode = await grant(sim, sim.demo!.appId)
      await new Promise((r) => setTimeout(r, 60))
      const answer = await exchange(sim, sim.demo!.appId, { accessCode, secretKey: sim.demo!.secretKey })
      assert.strictEqual(answer.errorCode, "ERR_INVALID_ACCESS_CODE")
      assert.match(String(answer.messages), /expired/)
    } finally {
      await sim.close()
    }
  })
})
