/**
 * Change detection in PostgreSQL (docs/architecture.md §4.14, §4.34): the same rules as the
 * SQLite file (../internal/changes.ts, `detector`), batched so that a batch costs a few round
 * trips, not a few per record.
 *
 * The SQLite file reads the rows a record will touch, writes the record's rows, then reads them
 * again, one record at a time. Here the batch is cut into runs of records in which no record
 * writes a row another record of the run compares (and no record compares a row an earlier one
 * wrote): within such a run, the rows as they were before the run are the rows as they were
 * before each record, and the rows after the run are the rows after each record. So per run:
 * one read of the compared rows per table, the run's rows (../PostgresStore.ts `execute`), one
 * read again, then the detector compares record by record in log order from those reads, and
 * the changes found and the ids passes saw are written with one statement each.
 *
 * A record that completes a pass (its deletions read the whole table and `pass_seen`) is a run
 * of its own, read and compared after everything before it was written.
 */
import { DomainEvent } from "@ocs/protocol"
import type pg from "pg"
import * as Changes from "../internal/changes.ts"
import type { Plan, ProjectableRecord } from "../internal/plan.ts"
import * as Projections from "../projections/index.ts"
import * as Inventory from "../projections/inventory.ts"
import * as Orders from "../projections/orders.ts"
import * as Products from "../projections/products.ts"
import { statements, translate } from "./Statements.ts"

type Kind = "product" | "order" | "bill"

const TABLE_OF: Readonly<Record<Kind | "stock", string>> = { product: "products", order: "orders", bill: "bills", stock: "inventory" }

/** The tables change detection compares: a write to one of them can end a run. */
const COMPARED: ReadonlySet<string> = new Set(Object.values(TABLE_OF))

/**
 * The SQLite query of one row, for many keys at once: the keys as a relation joined to the
 * table, so each key is an index lookup (an `IN (subquery)` may scan the whole table).
 */
const many = (single: string, idColumn: string) => {
  const select = /^SELECT (.*) FROM (\w+) WHERE/i.exec(single)
  if (select === null) throw new Error(`change detection in PostgreSQL: cannot batch ${single}`)
  const columns = select[1]!.split(",").map((c) => `t.${c.trim()}`).join(", ")
  return `SELECT t.app_id, t.business_id, t.${idColumn} AS key_id, ${columns}
    FROM (SELECT DISTINCT * FROM unnest($1::text[], $2::text[], $3::text[])) AS v(a, b, i)
    JOIN ${select[2]} t ON t.app_id = v.a AND t.business_id = v.b AND t.${idColumn} = v.i`
}

const READ: Readonly<Record<Kind | "stock", string>> = {
  product: many(Products.compare.current, "id"),
  order: many(Orders.compare.current, "id"),
  bill: many(Changes.BILL_CURRENT, "id"),
  stock: many(Inventory.compare.current, "product_id")
}

const MISSING: ReadonlyMap<string, string> = new Map(
  Projections.passes.map((pass) => [
    pass.kind,
    // an untyped `$n IS NULL` has no type PostgreSQL can infer
    translate(Changes.missingSql(pass)).replace("$3 IS NULL", "$3::bigint IS NULL").replace("$4 IS NULL", "$4::bigint IS NULL")
  ])
)

const keyOf = (table: string, appId: string, businessId: string, id: string) => `${table}\u0000${appId}\u0000${businessId}\u0000${id}`

/** What a run of records needs: the keys it compares, per table. */
interface Wanted {
  readonly keys: Map<Kind | "stock", Map<string, readonly [string, string, string]>>
}

/** Reads the compared rows of the wanted keys: one statement per table. */
const read = async (client: pg.PoolClient, wanted: Wanted) => {
  const entities = new Map<string, Changes.EntityRow>()
  const stock = new Map<string, Array<Changes.StockRow>>()
  for (const [kind, keys] of wanted.keys) {
    if (keys.size === 0) continue
    const columns: [Array<string>, Array<string>, Array<string>] = [[], [], []]
    for (const [a, b, id] of keys.values()) {
      columns[0].push(a)
      columns[1].push(b)
      columns[2].push(id)
    }
    const result = await client.query({ name: `ocs:changes.${kind}`, text: READ[kind], values: columns })
    for (const row of result.rows as Array<Record<string, unknown>>) {
      const key = keyOf(TABLE_OF[kind], row["app_id"] as string, row["business_id"] as string, row["key_id"] as string)
      if (kind === "stock") {
        let list = stock.get(key)
        if (list === undefined) stock.set(key, (list = []))
        list.push(row as unknown as Changes.StockRow)
      } else entities.set(key, row as unknown as Changes.EntityRow)
    }
  }
  return { entities, stock }
}

type Snapshot = Awaited<ReturnType<typeof read>>

/** Reads that record which keys a record compares (and answer "nothing there"). */
const recording = (wanted: Wanted, keys: Set<string>): Changes.Reads => {
  const want = (kind: Kind | "stock", appId: string, businessId: string, id: string) => {
    const key = keyOf(TABLE_OF[kind], appId, businessId, id)
    keys.add(key)
    let map = wanted.keys.get(kind)
    if (map === undefined) wanted.keys.set(kind, (map = new Map()))
    map.set(key, [appId, businessId, id])
  }
  return {
    entity: (kind, appId, businessId, id) => void want(kind, appId, businessId, id),
    stock: (appId, businessId, productId) => (want("stock", appId, businessId, productId), []),
    seen: () => {},
    completed: () => false,
    missing: () => [],
    forget: () => {},
    outbox: () => {}
  }
}

/** Writes collected while comparing, sent after each run. */
interface Pending {
  readonly seen: Array<readonly [string, string, string, string]>
  readonly forget: Array<readonly [string, string, string]>
  readonly outbox: Array<readonly [string, string, string, number, string, string | null]>
}

const columnsOf = <T extends ReadonlyArray<unknown>>(rows: ReadonlyArray<T>, width: number): Array<Array<unknown>> => {
  const out = Array.from({ length: width }, () => [] as Array<unknown>)
  for (const row of rows) for (let c = 0; c < width; c++) out[c]!.push(row[c])
  return out
}

const flush = async (client: pg.PoolClient, pending: Pending) => {
  if (pending.forget.length > 0) {
    await client.query({
      name: "ocs:changes.forget",
      text: `DELETE FROM pass_seen s USING unnest($1::text[], $2::text[], $3::text[]) AS v(a, b, p)
        WHERE s.app_id = v.a AND s.business_id = v.b AND s.pass_id = v.p`,
      values: columnsOf(pending.forget, 3)
    })
    pending.forget.length = 0
  }
  if (pending.seen.length > 0) {
    await client.query({
      name: "ocs:changes.seen",
      text: `INSERT INTO pass_seen (app_id, business_id, pass_id, entity_id) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
        ON CONFLICT DO NOTHING`,
      values: columnsOf(pending.seen, 4)
    })
    pending.seen.length = 0
  }
  if (pending.outbox.length > 0) {
    await client.query({
      name: "ocs:changes.outbox",
      text: `INSERT INTO change_outbox (app_id, business_id, source_record_id, source_offset, body, trace)
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[])`,
      values: columnsOf(pending.outbox, 6)
    })
    pending.outbox.length = 0
  }
}

/** Reads answered from a snapshot; writes collected in `pending`. */
const answering = (
  snapshot: () => Snapshot,
  pending: Pending,
  completion: { completed: Set<string>; missing: Map<string, ReadonlyArray<{ readonly id: string }>> }
): Changes.Reads => ({
  entity: (kind, appId, businessId, id) => snapshot().entities.get(keyOf(TABLE_OF[kind], appId, businessId, id)),
  stock: (appId, businessId, productId) => snapshot().stock.get(keyOf("inventory", appId, businessId, productId)) ?? [],
  seen: (appId, businessId, pass, id) => {
    pending.seen.push([appId, businessId, pass, id])
    if (id === "") completion.completed.add(keyOf("", appId, businessId, pass))
  },
  completed: (appId, businessId, pass) => completion.completed.has(keyOf("", appId, businessId, pass)),
  missing: (kind, appId, businessId, _createdFrom, pass) => completion.missing.get(`${kind}\u0000${keyOf("", appId, businessId, pass)}`) ?? [],
  forget: (appId, businessId, pass) => void pending.forget.push([appId, businessId, pass]),
  outbox: (appId, businessId, recordId, offset, body, trace) => void pending.outbox.push([appId, businessId, recordId, offset, body, trace])
})

/** The rows a record writes into a compared table (`<table>\0*` when a statement names no key). */
const writesOf = (plan: Plan, start: number, end: number): Array<string> => {
  const out: Array<string> = []
  for (let k = start; k < end; k++) {
    const statement = statements[plan.ops[k]!]!
    if (!COMPARED.has(statement.table)) continue
    const p = plan.params[k]!
    out.push(statement.kind === "batch" ? keyOf(statement.table, p[0] as string, p[1] as string, p[2] as string) : `${statement.table}\u0000*`)
  }
  return out
}

const tableOfKey = (key: string) => key.slice(0, key.indexOf("\u0000"))

/**
 * Applies the records `keep` admits (rows through `execute`) and detects their changes, for
 * records past `detectAfter`; returns the statements sent and the changes found.
 */
export const applyDetecting = async (
  client: pg.PoolClient,
  records: ReadonlyArray<ProjectableRecord>,
  decoded: ReadonlyArray<ReadonlyArray<DomainEvent.DomainEvent>>,
  plan: Plan,
  keep: ReadonlyArray<boolean>,
  detectAfter: number,
  execute: (keep: (r: number) => boolean) => Promise<number>
): Promise<{ readonly statements: number; readonly changes: number }> => {
  const starts: Array<number> = []
  for (let r = 0, start = 0; r < records.length; r++) {
    starts.push(start)
    start = plan.ends[r]!
  }
  let sent = 0
  let found = 0
  const pending: Pending = { seen: [], forget: [], outbox: [] }

  /** One run: records [from, to) of the batch. */
  const runOf = async (from: number, to: number, wanted: Wanted, detected: ReadonlyArray<number>) => {
    let before: Snapshot = { entities: new Map(), stock: new Map() }
    let after: Snapshot = before
    let current = before
    const completion = { completed: new Set<string>(), missing: new Map<string, ReadonlyArray<{ readonly id: string }>>() }
    const detector = Changes.detector(answering(() => current, pending, completion))
    if (detected.length > 0) before = await read(client, wanted)
    current = before
    const probes = detected.map((r) => detector.before(records[r]!, decoded[r]!))
    // the ids pages saw go in before a completion (a run of its own) reads them
    await flush(client, pending)
    sent += await execute((r) => r >= from && r < to && keep[r]!)
    if (detected.length === 0) return
    after = await read(client, wanted)
    for (const r of detected) {
      for (const event of decoded[r]!) {
        if (event._tag !== "SyncPassCompleted") continue
        const tenant = keyOf("", event.appId, event.businessId, event.passId)
        const done = await client.query({
          name: "ocs:changes.completed",
          text: "SELECT 1 FROM pass_seen WHERE app_id = $1 AND business_id = $2 AND pass_id = $3 AND entity_id = ''",
          values: [event.appId, event.businessId, event.passId]
        })
        if (done.rows.length > 0) completion.completed.add(tenant)
        const sql = MISSING.get(event.kind)
        if (sql === undefined || done.rows.length > 0) continue
        const missing = await client.query<{ id: string }>({
          name: `ocs:changes.missing.${event.kind}`,
          text: sql,
          values: [event.appId, event.businessId, event.createdFrom ?? null, event.createdFrom ?? null, event.passId, event.startedAt]
        })
        completion.missing.set(`${event.kind}\u0000${tenant}`, missing.rows)
      }
    }
    current = after
    detected.forEach((r, i) => (found += detector.after(records[r]!, decoded[r]!, probes[i]!)))
    await flush(client, pending)
  }

  let from = 0
  let wanted: Wanted = { keys: new Map() }
  let compared = new Set<string>()
  let written = new Set<string>()
  let detected: Array<number> = []
  const cut = async (at: number) => {
    if (at > from) await runOf(from, at, wanted, detected)
    from = at
    wanted = { keys: new Map() }
    compared = new Set()
    written = new Set()
    detected = []
  }
  for (let r = 0; r < records.length; r++) {
    if (!keep[r]) continue
    const record = records[r]!
    const writes = writesOf(plan, starts[r]!, plan.ends[r]!)
    const detect = record.offset > detectAfter
    const completes = detect && decoded[r]!.some((e) => e._tag === "SyncPassCompleted")
    if (completes) {
      await cut(r)
      detected.push(r)
      recordingBefore(wanted, new Set(), records[r]!, decoded[r]!)
      await cut(r + 1)
      continue
    }
    const keys = new Set<string>()
    if (detect) recordingBefore({ keys: new Map() }, keys, record, decoded[r]!)
    const clashes = writes.some((w) => compared.has(w) || (w.endsWith("\u0000*") && [...compared].some((c) => tableOfKey(c) === tableOfKey(w)))) ||
      [...keys].some((k) => written.has(k) || written.has(`${tableOfKey(k)}\u0000*`))
    if (clashes) await cut(r)
    if (detect) {
      detected.push(r)
      recordingBefore(wanted, compared, record, decoded[r]!)
    }
    for (const w of writes) written.add(w)
  }
  await cut(records.length)
  return { statements: sent, changes: found }
}

/**
 * Kafka mode: the copies `dropCopies` left out (another server's, applied at another position)
 * still count the ids of their pages for their own full pass (../internal/changes.ts `copy`,
 * docs/architecture.md §4.14), unless that pass has completed.
 */
export const countCopies = async (client: pg.PoolClient, copies: ReadonlyArray<ProjectableRecord>): Promise<void> => {
  const pending: Pending = { seen: [], forget: [], outbox: [] }
  const detector = Changes.detector(answering(() => ({ entities: new Map(), stock: new Map() }), pending, { completed: new Set(), missing: new Map() }))
  for (const record of copies) if (record.source === "sync") detector.copy(record, DomainEvent.decode(record))
  if (pending.seen.length === 0) return
  await client.query({
    name: "ocs:changes.seen-copies",
    text: `INSERT INTO pass_seen (app_id, business_id, pass_id, entity_id)
      SELECT v.a, v.b, v.p, v.e FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v(a, b, p, e)
      WHERE NOT EXISTS (SELECT 1 FROM pass_seen s WHERE s.app_id = v.a AND s.business_id = v.b AND s.pass_id = v.p AND s.entity_id = '')
      ON CONFLICT DO NOTHING`,
    values: columnsOf(pending.seen, 4)
  })
}

/** Runs `before` with reads that only note the keys it compares. */
const recordingBefore = (wanted: Wanted, keys: Set<string>, record: ProjectableRecord, decoded: ReadonlyArray<DomainEvent.DomainEvent>) =>
  void Changes.detector(recording(wanted, keys)).before(record, decoded)
