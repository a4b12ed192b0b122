/**
 * The simulator accepts what the real service is recorded to accept (docs/api-catalogue.md,
 * "Simulator leniency"), and strict mode refuses it as before. One simulator, switched between
 * the two modes through the control API, so each leniency is checked both ways.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import { fileURLToPath } from "node:url"
import * as Json from "@ocs/protocol/Json"
import type { RunningSimulator } from "../src/index.ts"
import { call, type Caller, start } from "./helpers.ts"

/** `ocs-simulator` as its own process; resolves with its control URL's strict switch. */
const strictOfCli = (flags: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<boolean>((resolve, reject) => {
    const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
    const child = ChildProcess.spawn(process.execPath, [bin, "--port", "0", "--products", "100", ...flags], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    const timer = setTimeout(() => child.kill(), 30_000)
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      const m = /listening on (http:\/\/[\d.:]+)/.exec(out)
      if (m === null) return
      child.stdout.removeAllListeners("data")
      fetch(`${m[1]}/_sim/settings`).then((r) => r.json()).then((s: any) => resolve(s.strict), reject).finally(() => {
        clearTimeout(timer)
        child.kill()
      })
    })
    child.on("exit", () => reject(new Error(`the simulator exited: ${out}`)))
  })

const nextText = (text: string) => Json.extract(text, ["paginator", "next"])

describe("simulator leniency, and strict mode", () => {
  let sim: RunningSimulator
  let demo: Caller
  const strict = (on: boolean) => sim.control.setApiSettings({ strict: on })
  beforeAll(async () => {
    sim = await start({ strict: false, products: 1000, orders: 300, customers: 120, deletedRatio: 0.02 })
    demo = sim.demo!
  })
  afterAll(() => sim.close())

  it("the engine's suites get strict mode by default (OCS_SIMULATOR_STRICT=1 in the test config)", async () => {
    const other = await start({ demo: false })
    try {
      assert.strictEqual((await other.control.apiSettings()).strict, process.env["OCS_SIMULATOR_STRICT"] === "1")
      assert.strictEqual(process.env["OCS_SIMULATOR_STRICT"], "1")
    } finally {
      await other.close()
    }
  })

  // One process only (a start costs seconds); the environment's default is checked in process above.
  it("the CLI's --strict flag selects strict mode when the environment does not", async () => {
    assert.isTrue(await strictOfCli(["--strict"], { OCS_SIMULATOR_STRICT: "0" }))
  })

  it("1. a null filter is absent; strict refuses it", async () => {
    await strict(false)
    const withNull = await call(sim, demo, "order/list", { filters: { statuses: null }, paginator: { size: 100 } })
    const without = await call(sim, demo, "order/list", { paginator: { size: 100 } })
    assert.strictEqual(withNull.json.code, 1, withNull.text)
    assert.isAbove(withNull.json.data.length, 0)
    assert.deepStrictEqual(withNull.json.data.map((o: any) => String(o.id)), without.json.data.map((o: any) => String(o.id)))
    await strict(true)
    const refused = await call(sim, demo, "order/list", { filters: { statuses: null } })
    assert.strictEqual(refused.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.property(refused.json.messages, "filters.statuses")
  })

  it("2. POS lists issue the documented {\"id\": n} and accept it rebuilt; strict rotates shapes and refuses it", async () => {
    await strict(false)
    // A client that reads next.id and rebuilds {"id": n} itself gets every product once.
    const seen = new Set<string>()
    let id: string | undefined
    for (let page = 0; page < 50; page++) {
      const res = await call(sim, demo, "product/list", id === undefined ? `{"paginator":{"size":100}}` : `{"paginator":{"size":100,"next":{"id":"${id}"}}}`)
      assert.strictEqual(res.json.code, 1, res.text)
      for (const p of res.json.data) {
        assert.isFalse(seen.has(String(p.id)), `product ${p.id} twice`)
        seen.add(String(p.id))
      }
      const next = nextText(res.text)
      if (next === undefined || next === "null") break
      assert.match(next, /^\{"id":\d+\}$/, "the documented shape")
      id = String(res.json.paginator.next.id)
    }
    const info = await sim.control.business(demo.businessId)
    assert.strictEqual(seen.size, info.counts!.products)

    // Sorted by name: the issued cursor carries more, and a rebuilt {"id": n} resumes at the same place.
    const first = await call(sim, demo, "product/list", { paginator: { size: 100, sort: { name: "asc" } } })
    const exact = await call(sim, demo, "product/list", `{"paginator":{"size":100,"sort":{"name":"asc"},"next":${nextText(first.text)}}}`)
    const reduced = await call(sim, demo, "product/list", { paginator: { size: 100, sort: { name: "asc" }, next: { id: first.json.paginator.next.id } } })
    assert.strictEqual(reduced.json.code, 1, reduced.text)
    assert.deepStrictEqual(reduced.json.data.map((p: any) => String(p.id)), exact.json.data.map((p: any) => String(p.id)))

    await strict(true)
    const shapes = new Set<string>()
    let next: string | undefined
    for (let page = 0; page < 3; page++) {
      const res = await call(sim, demo, "product/list", next === undefined ? `{"paginator":{"size":100}}` : `{"paginator":{"size":100,"next":${next}}}`)
      next = nextText(res.text)!
      shapes.add(next.startsWith("[") ? "array" : next.startsWith(`{"id"`) ? "keyed" : "object")
    }
    assert.strictEqual(shapes.size, 3, "strict rotates the shapes")
    const refused = await call(sim, demo, "product/list", { paginator: { size: 100, next: { id: first.json.paginator.next.id } } })
    assert.strictEqual(refused.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.property(refused.json.messages, "paginator.next")
  })

  it("3. unknown filters are ignored; strict refuses them", async () => {
    await strict(false)
    const plain = await call(sim, demo, "order/list", { paginator: { size: 100 } })
    const extra = await call(sim, demo, "order/list", { filters: { keyword: "x", depotId: 2, status: 54 }, paginator: { size: 100 } })
    assert.strictEqual(extra.json.code, 1, extra.text)
    assert.deepStrictEqual(extra.json.data.map((o: any) => String(o.id)), plain.json.data.map((o: any) => String(o.id)))
    await strict(true)
    const refused = await call(sim, demo, "order/list", { filters: { keyword: "x" } })
    assert.strictEqual(refused.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.match(refused.json.messages["filters.keyword"], /unknown filter/)
  })

  it("4. ids written as strings are read as ids; strict refuses them", async () => {
    await strict(false)
    const some = (await call(sim, demo, "product/list", { paginator: { size: 5 } })).json.data.map((p: any) => String(p.id))
    const asText = await call(sim, demo, "product/list", { filters: { ids: some } })
    assert.strictEqual(asText.json.code, 1, asText.text)
    assert.deepStrictEqual(asText.json.data.map((p: any) => String(p.id)).sort(), [...some].sort())
    const bills = (await call(sim, demo, "bill/list", { paginator: { size: 3 } })).json.data.map((b: any) => String(b.id))
    const billsAsText = await call(sim, demo, "bill/list", { filters: { ids: bills } })
    assert.deepStrictEqual(billsAsText.json.data.map((b: any) => String(b.id)).sort(), [...bills].sort())
    await strict(true)
    const refused = await call(sim, demo, "product/list", { filters: { ids: some } })
    assert.strictEqual(refused.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.property(refused.json.messages, "filters.ids")
  })

  it("5. customer/list answers filters.id with that customer; strict refuses it", async () => {
    await strict(false)
    const customers = (await call(sim, demo, "customer/list", { paginator: { size: 100 } })).json.data
    const wanted = customers[37]
    const one = await call(sim, demo, "customer/list", { filters: { id: wanted.id } })
    assert.strictEqual(one.json.code, 1, one.text)
    assert.deepStrictEqual(one.json.data.map((c: any) => String(c.id)), [String(wanted.id)])
    assert.strictEqual(one.json.data[0].mobile, wanted.mobile)
    await strict(true)
    const refused = await call(sim, demo, "customer/list", { filters: { id: wanted.id } })
    assert.strictEqual(refused.json.errorCode, "ERR_INVALID_FORM_FIELDS")
    assert.property(refused.json.messages, "filters.id")
  })

  it("6. an undocumented path answers an HTML 404; strict answers the JSON ERR_NOT_FOUND", async () => {
    await strict(false)
    for (const path of ["/pos/v3.0/product/nothing", "/somewhere/else", "/pos/v2.0/product/list"]) {
      const res = await fetch(`${sim.url}${path}?appId=${demo.appId}&businessId=${demo.businessId}`, { method: "POST", body: "{}" })
      assert.strictEqual(res.status, 404, path)
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/, path)
      assert.match(await res.text(), /<html>.*Not Found/s, path)
    }
    await strict(true)
    const res = await fetch(`${sim.url}/pos/v3.0/product/nothing`, { method: "POST", body: "{}" })
    assert.strictEqual(res.status, 404)
    assert.strictEqual(((await res.json()) as any).errorCode, "ERR_NOT_FOUND")
  })
})
