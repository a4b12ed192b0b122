/**
 * The event log's writer thread: its own better-sqlite3 connection to the log file, running
 * the group-commit transactions (dedupe check, inserts, commit with the file's `synchronous`
 * setting) off the main thread, so the main thread keeps serving while SQLite writes and
 * fsyncs. The main thread (./groupCommit.ts, through ./writerThread.ts) sends batches, at most
 * two in flight, and acknowledges the appends of a batch only after this thread answered that
 * its transaction committed; batches are committed and answered in the order they arrive.
 *
 * Loaded by `new Worker(url)` with plain Node (type stripping): it imports nothing that needs
 * a bundler, only better-sqlite3, node built-ins and the plain connection setup of
 * `@ocs/sqlite/Connection` (not the package's index: this thread needs no Effect or drizzle).
 */
import { applyPragmas } from "@ocs/sqlite/Connection"
import Database from "better-sqlite3"
import { parentPort, workerData } from "node:worker_threads"
import { DedupeIndex, type Digest, makeDigester } from "./dedupeIndex.ts"
import { decodeBatch, type Row } from "./rowCodec.ts"

export type { Row } from "./rowCodec.ts"

export interface WriterConfig {
  readonly filename: string
  readonly synchronous: "FULL" | "NORMAL"
  readonly busyTimeoutMillis: number
  readonly dedupeWindowMillis: number
}

/**
 * main -> writer: one batch = the appends of one transaction, one row list per append call.
 * `groups` is those rows in the text of ./rowCodec.ts: one string is far cheaper to post than
 * the structured clone of hundreds of small objects, and cheaper to write and read than JSON.
 */
export interface WriteRequest {
  readonly seq: number
  readonly now: number
  readonly groups: string
}

/**
 * Per append call: `offsets[i] > 0` is Appended at that offset, `< 0` is Duplicate of the
 * record at `-offsets[i]` whose id is `duplicateIds[i]`. Or the error that refused the call.
 */
export type GroupOutcome =
  | { readonly offsets: ReadonlyArray<number>; readonly duplicateIds: ReadonlyArray<string | null> }
  | { readonly error: string }

/**
 * The outcomes of one batch as posted: one number per row of the batch, in order (as in
 * GroupOutcome; 0 for the rows of a refused call), the duplicates' ids only when there is a
 * duplicate, the refused calls' errors only when one was refused. One typed array clones far
 * cheaper than an object and two arrays per append call.
 */
export interface Outcomes {
  readonly offsets: Float64Array<ArrayBuffer>
  readonly duplicateIds: ReadonlyArray<string | null> | undefined
  readonly errors: ReadonlyArray<string | null> | undefined
}

const pack = (groups: ReadonlyArray<ReadonlyArray<Row>>, outcomes: ReadonlyArray<GroupOutcome>): Outcomes => {
  let rows = 0
  for (const g of groups) rows += g.length
  const offsets = new Float64Array(rows)
  let duplicateIds: Array<string | null> | undefined
  let errors: Array<string | null> | undefined
  let k = 0
  outcomes.forEach((o, g) => {
    if ("error" in o) {
      errors ??= Array.from({ length: groups.length }, () => null)
      errors[g] = o.error
      k += groups[g]!.length
      return
    }
    o.offsets.forEach((offset, i) => {
      if (offset < 0) {
        duplicateIds ??= Array.from({ length: rows }, () => null)
        duplicateIds[k + i] = o.duplicateIds[i]!
      }
      offsets[k + i] = offset
    })
    k += o.offsets.length
  })
  return { offsets, duplicateIds, errors }
}

/** writer -> main. */
export type WriterMessage =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "OpenFailed"; readonly error: string }
  | { readonly _tag: "Written"; readonly seq: number; readonly outcomes: Outcomes }
  /** The whole batch was refused before its transaction began (it did not decode). */
  | { readonly _tag: "Refused"; readonly seq: number; readonly error: string }

const messageOf = (cause: unknown) => cause instanceof Error ? cause.message : String(cause)

const run = (port: NonNullable<typeof parentPort>, config: WriterConfig) => {
  let client: Database.Database
  try {
    // The main thread created (owner-only) and migrated the file before starting this thread.
    client = new Database(config.filename)
    applyPragmas(client, { synchronous: config.synchronous, busyTimeoutMillis: config.busyTimeoutMillis })
  } catch (cause) {
    port.postMessage({ _tag: "OpenFailed", error: messageOf(cause) } satisfies WriterMessage)
    return
  }
  const dedupeWindow = config.dedupeWindowMillis
  const insert = client.prepare(
    `INSERT INTO records (id, tenant, app_id, business_id, source, type, received_at, body, dedupe_key, meta, entity_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
  )
  // Exact dedupe lookup in SQLite, for a record older than what the in-memory index holds
  // (a caller-given receivedAt far in the past): the records of that time range, the tenant
  // checked in the index, the key only in that tenant's rows.
  const byDedupeKey = client.prepare<[number, string, string], { offset: number; id: string }>(
    `SELECT "offset", id FROM records INDEXED BY records_received_tenant
     WHERE received_at >= ? AND tenant = ? AND dedupe_key = ? ORDER BY "offset" LIMIT 1`
  )
  const byId = client.prepare<[string], { offset: number; id: string }>(`SELECT "offset", id FROM records WHERE id = ?`)
  const byOffset = client.prepare<[number], { id: string; tenant: string; dedupeKey: string | null }>(
    `SELECT id, tenant, dedupe_key AS dedupeKey FROM records WHERE "offset" = ?`
  )
  const keyed = `"offset", tenant, dedupe_key AS dedupeKey, received_at AS receivedAt`
  interface Keyed {
    readonly offset: number
    readonly tenant: string
    readonly dedupeKey: string
    readonly receivedAt: number
  }
  const keyedSince = client.prepare<[number], Keyed>(`SELECT ${keyed} FROM records WHERE "offset" > ? AND dedupe_key IS NOT NULL ORDER BY "offset"`)
  const lastOffset = client.prepare<[], { offset: number | null }>(`SELECT max("offset") AS offset FROM records`)
  // The window's records in offset order without sorting them: a scan of the table from the
  // first offset that has a receivedAt in the window (found in the time index).
  const keyedSinceTime = client.prepare<[{ readonly horizon: number }], Keyed>(
    `SELECT ${keyed} FROM records
     WHERE "offset" >= (SELECT min("offset") FROM records INDEXED BY records_received_tenant WHERE received_at >= @horizon)
       AND received_at >= @horizon AND dedupe_key IS NOT NULL ORDER BY "offset"`
  )
  const decision = client.prepare(
    `INSERT INTO dedupe_decisions (decided_at, tenant, reason, dedupe_key, original_offset, id, type, source, received_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
  )
  const commit = client.prepare(`INSERT INTO commits (committed_at, requests, appended, duplicates) VALUES (?, ?, ?, ?)`)

  // The dedupe index (./dedupeIndex.ts), loaded from the records of the window, over the
  // (received_at, tenant) index. `known`: the last offset it has seen; records
  // above it were appended by another process (another writer of the same file) and are added
  // at the start of each transaction, under the write lock, so the index is never behind.
  const loadedAt = Date.now()
  const index = new DedupeIndex(dedupeWindow, loadedAt - dedupeWindow)
  const digest = makeDigester()
  let known = 0
  const learn = (row: Keyed) => {
    const d = digest(row.tenant, row.dedupeKey)
    const previous = confirmed(d, row.tenant, row.dedupeKey)
    index.put(d, { offset: row.offset, receivedAt: row.receivedAt }, previous?.offset)
  }
  /** The index's entry for this pair (whatever its age), read back from the records to confirm it. */
  const confirmed = (d: Digest, tenant: string, dedupeKey: string) => {
    for (const candidate of index.candidates(d)) {
      const row = byOffset.get(candidate.offset)
      if (row !== undefined && row.tenant === tenant && row.dedupeKey === dedupeKey) {
        return { offset: candidate.offset, receivedAt: candidate.receivedAt, id: row.id }
      }
    }
    return undefined
  }
  try {
    client.transaction(() => {
      known = lastOffset.get()?.offset ?? 0
      for (const row of keyedSinceTime.iterate({ horizon: index.horizon })) learn(row)
    }).deferred()
  } catch (cause) {
    port.postMessage({ _tag: "OpenFailed", error: `loading the dedupe index: ${messageOf(cause)}` } satisfies WriterMessage)
    client.close()
    return
  }

  interface Staged {
    readonly digest: Digest
    readonly offset: number
    readonly id: string
    readonly receivedAt: number
    /** The offset of the pair's previous (out-of-window) entry in the index, replaced at commit. */
    readonly replaces: number | undefined
  }
  /** Entries of the transaction running now; merged into the index only once it committed. */
  const staged = new Map<string, Staged>()

  /**
   * The record this one duplicates by dedupe key (offset > 0), or what its entry in the index
   * must replace (offset 0). `digest`: the pair's digest when it was computed, for the staging.
   */
  interface Original {
    readonly offset: number
    readonly id: string
    readonly replaces?: number | undefined
    readonly digest?: Digest | undefined
  }
  const original = (row: Row, pair: string): Original | undefined => {
    const key = row.dedupeKey!
    const since = row.receivedAt - dedupeWindow
    const inTransaction = staged.get(pair)
    if (inTransaction !== undefined && inTransaction.receivedAt >= since) return inTransaction
    if (since < index.horizon) return byDedupeKey.get(since, row.tenant, key)
    const d = digest(row.tenant, key)
    const found = confirmed(d, row.tenant, key)
    if (found === undefined) return { offset: 0, id: "", digest: d }
    return found.receivedAt >= since ? found : { offset: 0, id: "", replaces: found.offset, digest: d }
  }

  /** One transaction for the given append calls; throws (rolled back) if any statement fails. */
  const writeGroups = client.transaction((groups: ReadonlyArray<ReadonlyArray<Row>>, now: number) => {
    for (const row of keyedSince.iterate(known)) {
      learn(row)
      known = row.offset
    }
    let appended = 0
    let duplicates = 0
    const out: Array<GroupOutcome> = []
    for (const rows of groups) {
      const offsets: Array<number> = []
      const duplicateIds: Array<string | null> = []
      for (const row of rows) {
        const byIdRow = row.idGiven ? byId.get(row.id) : undefined
        const pair = row.dedupeKey === null ? "" : `${row.tenant}\u0000${row.dedupeKey}`
        const byKey = byIdRow === undefined && row.dedupeKey !== null ? original(row, pair) : undefined
        const found = byIdRow ?? (byKey !== undefined && byKey.offset > 0 ? byKey : undefined)
        if (found !== undefined) {
          duplicates++
          decision.run(
            now, row.tenant, byIdRow === undefined ? "dedupeKey" : "id", row.dedupeKey, found.offset, row.id, row.type, row.source, row.receivedAt
          )
          offsets.push(-found.offset)
          duplicateIds.push(found.id)
        } else {
          appended++
          const info = insert.run(
            row.id, row.tenant, row.appId, row.businessId, row.source, row.type, row.receivedAt, row.body, row.dedupeKey, row.meta, row.entityId
          )
          const offset = Number(info.lastInsertRowid)
          offsets.push(offset)
          duplicateIds.push(null)
          if (row.dedupeKey !== null) {
            const before = staged.get(pair)
            staged.set(pair, {
              digest: before?.digest ?? byKey?.digest ?? digest(row.tenant, row.dedupeKey),
              offset,
              id: row.id,
              receivedAt: row.receivedAt,
              replaces: before !== undefined ? before.replaces : byKey?.replaces
            })
          }
        }
      }
      out.push({ offsets, duplicateIds })
    }
    commit.run(now, groups.length, appended, duplicates)
    return out
  })

  /** Runs the transaction; the index learns its entries only if it committed. */
  const write = (groups: ReadonlyArray<ReadonlyArray<Row>>, now: number): ReadonlyArray<GroupOutcome> => {
    staged.clear()
    try {
      const out = writeGroups.immediate(groups, now)
      for (const s of staged.values()) index.put(s.digest, { offset: s.offset, receivedAt: s.receivedAt }, s.replaces)
      // Appended offsets are positive (a duplicate's is negated).
      for (const o of out) if (!("error" in o)) for (const offset of o.offsets) if (offset > known) known = offset
      return out
    } finally {
      staged.clear()
    }
  }

  port.on("message", (message: WriteRequest | "close") => {
    if (message === "close") {
      port.close()
      client.close()
      return
    }
    let outcomes: ReadonlyArray<GroupOutcome>
    let groups: ReadonlyArray<ReadonlyArray<Row>>
    try {
      groups = decodeBatch(message.groups)
    } catch (cause) {
      port.postMessage({ _tag: "Refused", seq: message.seq, error: messageOf(cause) } satisfies WriterMessage)
      return
    }
    try {
      outcomes = write(groups, message.now)
    } catch {
      // One bad append call must not fail its neighbours: retry each alone.
      outcomes = groups.map((rows): GroupOutcome => {
        try {
          return write([rows], message.now)[0]!
        } catch (cause) {
          return { error: messageOf(cause) }
        }
      })
    }
    const packed = pack(groups, outcomes)
    port.postMessage({ _tag: "Written", seq: message.seq, outcomes: packed } satisfies WriterMessage, [packed.offsets.buffer])
  })
  port.postMessage({ _tag: "Ready" } satisfies WriterMessage)
}

if (parentPort !== null) run(parentPort, workerData as WriterConfig)
