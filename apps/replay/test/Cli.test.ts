/**
 * The CLI as a process, against an event log generated in a temp dir (see fixture.ts): stdout,
 * stderr and exit codes, as a person or a script would see them.
 */
import { ReadModels } from "@ocs/read-models"
import { Effect, Option } from "effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { APP, BIZ, cli, digest, type Fixture, HOUR, makeFixture, ORDER, OTHER, OTHER_TENANT, P1, P2, P2_NAME, records, T0, tamper, TENANT } from "./fixture.ts"

let f: Fixture
const out = (name: string) => NodePath.join(f.dir, name)
const lines = (text: string) => text.split("\n").filter((l) => l.length > 0)
const ndjson = (text: string) => lines(text).map((l) => JSON.parse(l) as Record<string, unknown>)

/** RFC 4180 parser (quoted fields may hold commas, quotes and line breaks). */
const parseCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === ",") {
      row.push(field)
      field = ""
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(field)
      rows.push(row)
      row = []
      field = ""
      i++
    } else field += c
  }
  if (field !== "" || row.length > 0) rows.push([...row, field])
  return rows
}

const product = (filename: string, businessId: string, id: string) =>
  Effect.runPromise(Effect.gen(function*() {
    const rm = yield* ReadModels.ReadModels
    return Option.getOrUndefined(yield* rm.product({ appId: APP, businessId }, id))
  }).pipe(Effect.scoped, Effect.provide(ReadModels.ReadModels.layer({ filename }))))

beforeAll(async () => {
  f = await makeFixture()
})
afterAll(() => {
  NodeFs.rmSync(f.dir, { recursive: true, force: true })
})

describe("replay", () => {
  it("rebuilds the same read models as the live projection, with a summary and progress", async () => {
    const r = await cli(["replay", "--log", f.log, "--out", out("all.sqlite"), "--format", "json", "--progress", "plain"])
    assert.strictEqual(r.code, 0, r.stderr)
    const summary = JSON.parse(r.stdout) as { records: number; events: number; lastOffset: number; seconds: number; tables: Record<string, number> }
    assert.strictEqual(summary.records, records().length)
    assert.strictEqual(summary.events, 9) // 7 webhooks + a page of 2 products; the system record has none
    assert.deepStrictEqual(summary.tables, {
      products: 3, inventory: 1, orders: 2, order_items: 1, bills: 0, bill_items: 0, customers: 0, depots: 0, categories: 0, brands: 0,
      payments: 0, documents: 0, webhooks_enabled: 0, unknown_events: 0, commands: 0,
      vpage_pages: 0, vpage_users: 0, vpage_tags: 0, vpage_conversations: 0, vpage_messages: 0, vpage_customers: 0
    })
    // Not a terminal: plain progress lines, the last one says done.
    assert.match(r.stderr, /replay .*9\/9 records .*records\/s.*done/)
    // Plain lines: no bar drawn, no carriage returns or terminal codes.
    assert.notInclude(r.stderr, "[#")
    assert.notInclude(r.stderr, "\r")
    assert.notInclude(r.stderr, "\u001b")
    assert.match(r.stderr, /replay  100\.0%  9\/9 records/)
    assert.deepStrictEqual(await digest(out("all.sqlite")), await digest(f.live))
  })

  it("rebuilds one tenant, equal to the live file's rows of that tenant", async () => {
    const r = await cli(["replay", "--log", f.log, "--out", out("one.sqlite"), "--tenant", OTHER_TENANT, "--progress", "none"])
    assert.strictEqual(r.code, 0, r.stderr)
    assert.match(r.stdout, /replayed 2 records/)
    assert.match(r.stdout, /products\s+1/)
    const tenant = { appId: APP, businessId: OTHER }
    assert.deepStrictEqual(await digest(out("one.sqlite"), tenant), await digest(f.live, tenant))
    assert.strictEqual((await digest(out("one.sqlite"), { appId: APP, businessId: BIZ })).tables["products"]?.rows, 0)
  })

  it("replays to a point in time (an instant, or an offset)", async () => {
    const at = await cli(["replay", "--log", f.log, "--out", out("t.sqlite"), "--until", new Date(T0 + 1.5 * HOUR).toISOString(), "--progress", "none"])
    assert.strictEqual(at.code, 0, at.stderr)
    // After the sync page (price 11), before the productUpdate (price 12).
    assert.strictEqual((await product(out("t.sqlite"), BIZ, P1))?.price, 11)
    assert.strictEqual((await product(f.live, BIZ, P1))?.price, 12)
    const first = await cli(["replay", "--log", f.log, "--out", out("o.sqlite"), "--until-offset", "1", "--format", "json", "--progress", "none"])
    assert.strictEqual(first.code, 0, first.stderr)
    const summary = JSON.parse(first.stdout) as { records: number; tables: Record<string, number> }
    assert.strictEqual(summary.records, 1)
    assert.strictEqual(summary.tables["products"], 1)
    assert.strictEqual((await product(out("o.sqlite"), BIZ, P1))?.price, 10.5)
  })
})

describe("verify", () => {
  it("exits 0 when the live file matches the log", async () => {
    const r = await cli(["verify", "--log", f.log, "--live", f.live, "--progress", "none"])
    assert.strictEqual(r.code, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /matches the log/)
    assert.match(r.stdout, /log: 9 records checked: offsets in order, ids and dedupe keys unique, bodies decodable/)
  })

  it("checks the log itself: a deleted record, a repeated id or dedupe key, a body that is not JSON", async () => {
    tamper(f.log, out("tampered-log.sqlite"), [
      `DELETE FROM records WHERE "offset" = 3`,
      `DROP INDEX records_id`,
      `UPDATE records SET id = (SELECT id FROM records WHERE "offset" = 1) WHERE "offset" = 4`,
      `UPDATE records SET dedupe_key = 'productAdd:p1' WHERE "offset" = 6`,
      `UPDATE records SET body = '{"event": "productAdd", ' WHERE "offset" = 8`
    ])
    const r = await cli(["verify", "--log", out("tampered-log.sqlite"), "--live", f.live, "--ignore-checkpoint", "--format", "json", "--progress", "none"])
    assert.strictEqual(r.code, 1, r.stderr)
    const report = JSON.parse(r.stdout) as { equal: boolean; log: { records: number; problems: number; details: Array<{ offset: number; kind: string }> } }
    assert.strictEqual(report.equal, false)
    assert.strictEqual(report.log.records, 8)
    assert.deepStrictEqual(report.log.details.map((p) => [p.offset, p.kind]), [
      [4, "offset-gap"],
      [4, "duplicate-id"],
      [6, "duplicate-dedupe-key"],
      [8, "undecodable-body"]
    ])
    const text = await cli(["verify", "--log", out("tampered-log.sqlite"), "--live", f.live, "--ignore-checkpoint", "--progress", "none"])
    assert.strictEqual(text.code, 1)
    assert.match(text.stdout, /log: 8 records checked: 4 problems \(offset-gap 1, duplicate-id 1, duplicate-dedupe-key 1, undecodable-body 1\)/)
    assert.match(text.stdout, /4\s+offset-gap\s+offsets 3\.\.3 are missing/)
    // A repeated dedupe key past the window is a legitimate new delivery.
    const wide = await cli(["verify", "--log", out("tampered-log.sqlite"), "--live", f.live, "--ignore-checkpoint", "--dedupe-window-seconds", "60", "--format", "json", "--progress", "none"])
    assert.notInclude((JSON.parse(wide.stdout) as { log: { details: Array<{ kind: string }> } }).log.details.map((p) => p.kind), "duplicate-dedupe-key")
  })

  it("exits 1 and names the entities after the live file was tampered with", async () => {
    tamper(f.live, out("tampered.sqlite"), [
      `UPDATE products SET price = 99, price_text = '99' WHERE id = '${P1}'`,
      `DELETE FROM orders WHERE id = '${ORDER}'`
    ])
    const r = await cli(["verify", "--log", f.log, "--live", out("tampered.sqlite"), "--progress", "none"])
    assert.strictEqual(r.code, 1, r.stderr)
    assert.match(r.stdout, /2 differences/)
    assert.match(r.stdout, new RegExp(`products\\s+${APP}:${BIZ}:${P1}\\s+changed\\s+price: log 12, live 99`))
    assert.match(r.stdout, new RegExp(`orders\\s+${APP}:${BIZ}:${ORDER}\\s+missing`))

    const json = await cli(["verify", "--log", f.log, "--live", out("tampered.sqlite"), "--format", "json", "--progress", "none"])
    assert.strictEqual(json.code, 1)
    const report = JSON.parse(json.stdout) as { equal: boolean; differences: number; details: Array<{ table: string; kind: string; key: Record<string, unknown>; columns?: Array<{ column: string }> }> }
    assert.strictEqual(report.equal, false)
    assert.deepStrictEqual(report.details.map((d) => [d.table, d.kind, d.key["id"]]), [["products", "changed", P1], ["orders", "missing", ORDER]])
    assert.deepStrictEqual(report.details[0]!.columns!.map((c) => c.column), ["price", "price_text"])
  })
})

describe("compare", () => {
  it("two read-model files: equal exits 0, a difference exits 1 naming the entity", async () => {
    const copy = out("compare-a.sqlite")
    NodeFs.copyFileSync(f.live, copy)
    const same = await cli(["compare", f.live, copy])
    assert.strictEqual(same.code, 0, same.stdout + same.stderr)
    assert.match(same.stdout, /hold the same read models/)

    tamper(f.live, out("compare-b.sqlite"), [
      `UPDATE products SET price = 99, price_text = '99' WHERE id = '${P1}'`,
      `DELETE FROM orders WHERE id = '${ORDER}'`
    ])
    const r = await cli(["compare", f.live, out("compare-b.sqlite")])
    assert.strictEqual(r.code, 1, r.stderr)
    assert.match(r.stdout, /2 differences/)
    assert.match(r.stdout, new RegExp(`products\\s+${APP}:${BIZ}:${P1}\\s+changed\\s+price: a 12, b 99`))
    assert.match(r.stdout, new RegExp(`orders\\s+${APP}:${BIZ}:${ORDER}\\s+only in a`))
    const json = await cli(["compare", f.live, out("compare-b.sqlite"), "--tenant", OTHER_TENANT, "--format", "json"])
    assert.strictEqual(json.code, 0, json.stderr) // the other tenant's rows are untouched
    assert.strictEqual((JSON.parse(json.stdout) as { equal: boolean }).equal, true)
  })
})

describe("audit", () => {
  it("filters by tenant, type, source and time range, as ndjson, json and a table", async () => {
    const adds = await cli(["audit", "--log", f.log, "--tenant", TENANT, "--type", "productAdd", "--format", "ndjson"])
    assert.strictEqual(adds.code, 0, adds.stderr)
    assert.deepStrictEqual(ndjson(adds.stdout).map((r) => r["offset"]), [1, 2])

    const system = await cli(["audit", "--log", f.log, "--source", "system", "--format", "json"])
    const parsed = JSON.parse(system.stdout) as Array<{ type: string; tenant: string; body: string }>
    assert.deepStrictEqual(parsed.map((r) => [r.type, r.tenant]), [["transport.LockTaken", TENANT]])

    const window = await cli(["audit", "--log", f.log, "--from", new Date(T0 + HOUR).toISOString(), "--to", new Date(T0 + 24 * HOUR).toISOString(), "--format", "ndjson"])
    assert.deepStrictEqual(ndjson(window.stdout).map((r) => r["offset"]), [5, 6, 7, 8])

    const table = await cli(["audit", "--log", f.log, "--tenant", OTHER_TENANT])
    assert.strictEqual(table.code, 0, table.stderr)
    assert.match(lines(table.stdout)[0]!, /offset\s+received_at\s+tenant\s+source\s+type/)
    assert.match(table.stdout, /1001:42\s+webhook\s+orderAdd/)
    assert.match(table.stdout, /\(2 records\)/)
  })

  it("finds every record that touched an entity, sync pages included", async () => {
    const r = await cli(["audit", "--log", f.log, "--tenant", TENANT, "--entity", P1, "--format", "ndjson"])
    assert.strictEqual(r.code, 0, r.stderr)
    // productAdd, inventoryChange (its stock), the sync page, productUpdate; not the order naming it in a line.
    assert.deepStrictEqual(ndjson(r.stdout).map((x) => x["offset"]), [1, 3, 5, 6])
  })

  it("history shows the field changes of a product across webhook, sync and webhook", async () => {
    const r = await cli(["history", P1, "--log", f.log, "--tenant", TENANT])
    assert.strictEqual(r.code, 0, r.stderr)
    assert.match(r.stdout, /#1 .*productAdd\s+ProductAdded\s+product[\s\S]*\+ name: "Cà phê"[\s\S]*\+ price: 10.5/)
    assert.match(r.stdout, /#5 .*sync\s+product\/list.page\s+ProductObserved\s+product[\s\S]*~ price: 10.5 -> 11/)
    assert.match(r.stdout, /#6 .*productUpdate\s+ProductUpdated\s+product[\s\S]*~ name: "Cà phê" -> "Cà phê sữa"[\s\S]*~ price: 11 -> 12/)
    assert.match(r.stdout, /#3 .*InventoryChanged\s+stock@1[\s\S]*\+ remain: 5/)
    // v3 records carry unix seconds; the history shows ISO dates.
    const order = await cli(["history", ORDER, "--log", f.log, "--tenant", TENANT])
    assert.match(order.stdout, /#4 .*OrderAdded\s+order\s+updatedAt=2024-05-01T10:00:03\.000Z/)

    const json = await cli(["audit", "history", P1, "--log", f.log, "--tenant", TENANT, "--format", "json"])
    const entries = JSON.parse(json.stdout) as Array<{ offset: number; facet: string; first: boolean; changes: Array<{ path: string; op: string; from?: string; to?: string }> }>
    const productEntries = entries.filter((e) => e.facet === "product")
    assert.deepStrictEqual(productEntries.map((e) => e.offset), [1, 5, 6])
    assert.strictEqual(productEntries[0]!.first, true)
    assert.deepStrictEqual(productEntries[2]!.changes.find((c) => c.path === "price"), { path: "price", op: "changed", from: "11", to: "12" })
  })
})

describe("export", () => {
  it("streams log records as NDJSON and CSV (quoted as RFC 4180)", async () => {
    const nd = await cli(["export", "--log", f.log, "--tenant", TENANT, "--type", "productAdd"])
    assert.strictEqual(nd.code, 0, nd.stderr)
    const items = ndjson(nd.stdout)
    assert.deepStrictEqual(items.map((x) => x["offset"]), [1, 2])
    assert.strictEqual(items[1]!["body"], records()[1]!.body)

    const target = out("records.csv")
    const csv = await cli(["export", "--log", f.log, "--tenant", TENANT, "--type", "productAdd", "--format", "csv", "--out", target])
    assert.strictEqual(csv.code, 0, csv.stderr)
    assert.strictEqual(csv.stdout, "")
    const rows = parseCsv(NodeFs.readFileSync(target, "utf8"))
    assert.strictEqual(rows[0]![0], "offset")
    assert.strictEqual(rows.length, 3)
    const body = rows[0]!.indexOf("body")
    assert.strictEqual(rows[2]![body], records()[1]!.body) // quotes and commas survive
  })

  it("exports the new tables: orders with their columns, order lines with their record as JSON", async () => {
    const orders = ndjson((await cli(["export", "--table", "orders", "--db", f.live, "--tenant", TENANT])).stdout)
    assert.deepStrictEqual(orders.map((o) => [o["id"], o["status"], o["sale_channel"], o["customer_mobile"], o["total"], o["line_count"]]), [[ORDER, "54", "2", "0900000001", 21, 1]])
    const items = await cli(["export", "--table", "order_items", "--db", f.live, "--tenant", TENANT])
    assert.strictEqual(items.code, 0, items.stderr)
    const [line] = ndjson(items.stdout)
    assert.deepStrictEqual([line!["order_id"], line!["line"], line!["product_id"], line!["quantity"]], [ORDER, 0, P1, 2])
    assert.deepStrictEqual(line!["record"], { productId: Number(P1), quantity: 2, price: 10.5 })
    // Every projected table is exportable, empty ones included.
    for (const table of ["bills", "bill_items", "customers", "depots", "categories", "brands"]) {
      const r = await cli(["export", "--table", table, "--db", f.live, "--format", "csv"])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.include(lines(r.stdout)[0]!, "app_id,business_id")
    }
  })

  it("exports a read-model table, with quotes, commas and line breaks in fields", async () => {
    const csv = await cli(["export", "--table", "products", "--db", f.live, "--tenant", TENANT, "--format", "csv"])
    assert.strictEqual(csv.code, 0, csv.stderr)
    const rows = parseCsv(csv.stdout)
    const [header, ...data] = rows
    const id = header!.indexOf("id")
    const name = header!.indexOf("name")
    assert.deepStrictEqual(data.map((r) => r[id]), [P1, P2])
    assert.strictEqual(data[1]![name], P2_NAME)

    const nd = await cli(["export", "--table", "products", "--db", f.live, "--tenant", OTHER_TENANT])
    const [row] = ndjson(nd.stdout)
    assert.strictEqual(row!["name"], "Bánh mì")
    assert.deepStrictEqual((row!["record"] as Record<string, unknown>)["price"], 3) // JSON columns embedded as JSON
  })
})

describe("stats", () => {
  it("counts per tenant, type and day, duplicates dropped and locks seen", async () => {
    const r = await cli(["stats", "--log", f.log, "--format", "json"])
    assert.strictEqual(r.code, 0, r.stderr)
    const s = JSON.parse(r.stdout) as {
      records: number
      byTenant: Array<{ tenant: string; records: number }>
      byType: Array<{ type: string; records: number }>
      byDay: Array<{ day: string; records: number }>
      duplicates: { total: number; byTenant: Array<{ tenant: string; type: string }> }
      locks: { total: number; byTenant: Array<{ tenant: string; operation: string; count: number }> }
    }
    assert.strictEqual(s.records, 9)
    assert.deepStrictEqual(s.byTenant.map((t) => [t.tenant, t.records]), [[OTHER_TENANT, 2], [TENANT, 7]])
    assert.strictEqual(s.byType.find((t) => t.type === "productAdd")?.records, 3)
    assert.deepStrictEqual(s.byDay, [{ day: "2024-05-01", records: 7 }, { day: "2024-05-02", records: 2 }])
    assert.strictEqual(s.duplicates.total, 1)
    assert.deepStrictEqual(s.duplicates.byTenant.map((d) => [d.tenant, d.type]), [[TENANT, "productAdd"]])
    assert.deepStrictEqual(s.locks.byTenant.map((l) => [l.tenant, l.operation, l.count]), [[TENANT, "product/list", 1]])

    const text = await cli(["stats", "--log", f.log, "--tenant", OTHER_TENANT])
    assert.match(text.stdout, /2 records/)
    assert.match(text.stdout, /locks seen \(transport.LockTaken\): 0/)
  })

  it("one tenant over a time range (scanned in the time index): the sync page, the update and the lock", async () => {
    const r = await cli(["stats", "--log", f.log, "--tenant", TENANT, "--from", "2024-05-01T11:00:00Z", "--to", "2024-05-01T12:01:00Z", "--format", "json"])
    assert.strictEqual(r.code, 0, r.stderr)
    const s = JSON.parse(r.stdout) as { records: number; byType: Array<{ type: string; records: number }>; locks: { total: number } }
    assert.strictEqual(s.records, 3)
    assert.deepStrictEqual(s.byType.map((t) => t.type).toSorted(), ["product/list.page", "productUpdate", "transport.LockTaken"])
    assert.strictEqual(s.locks.total, 1)
  })
})

describe("usage and input errors", () => {
  it("exit 2 with a message a person can act on", async () => {
    const cases: Array<[ReadonlyArray<string>, RegExp]> = [
      [["audit", "--log", f.log, "--tenant", "shop-42"], /"shop-42" is not a tenant: use appId:businessId/],
      [["audit", "--log", f.log, "--from", "yesterday"], /"yesterday" is not a date: use ISO 8601/],
      [["stats", "--log", out("missing.sqlite")], /event log not found: .*missing\.sqlite/],
      [["replay", "--log", f.log], /Missing required flag: --out/],
      [["verify", "--log", f.log, "--live", out("nope.sqlite")], /live read-model file not found/],
      [["export", "--table", "products"], /needs both --table and --db/],
      [["replay", "--kafka-brokers", "127.0.0.1:9092", "--out", out("k.sqlite")], /--kafka-brokers needs --topic/]
    ]
    for (const [args, message] of cases) {
      const r = await cli(args)
      assert.strictEqual(r.code, 2, `${args.join(" ")}: ${r.stderr}`)
      assert.match(r.stderr, message)
      assert.strictEqual(r.stdout, "", `${args.join(" ")} wrote to stdout`)
    }
  })

  it("--help everywhere, exit 0", async () => {
    const root = await cli(["--help"])
    assert.strictEqual(root.code, 0)
    for (const name of ["replay", "verify", "audit", "history", "export", "stats"]) assert.match(root.stdout, new RegExp(`\\b${name}\\b`))
    const replay = await cli(["replay", "--help"])
    assert.strictEqual(replay.code, 0)
    assert.match(replay.stdout, /--until-offset/)
    assert.match(replay.stdout, /--kafka-brokers/)
  })
})
