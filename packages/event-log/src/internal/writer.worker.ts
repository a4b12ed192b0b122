/**
 * The event log's writer thread: its own better-sqlite3 connection to the log file, running
 * the group-commit transactions (dedupe check, inserts, commit with the file's `synchronous`
 * setting) off the main thread, so the main thread keeps serving while SQLite writes and
 * fsyncs. The main thread (./sqliteLog.ts) sends one batch at a time and acknowledges the
 * appends of a batch only after this thread answered that its transaction committed.
 *
 * Loaded by `new Worker(url)` with plain Node (type stripping): it imports nothing that needs
 * a bundler, only better-sqlite3 and node built-ins.
 */
import Database from "better-sqlite3"
import { parentPort, workerData } from "node:worker_threads"

/** A record ready to insert (validated and completed on the main thread). */
export interface Row {
  readonly id: string
  readonly idGiven: boolean
  readonly tenant: string
  readonly appId: string
  readonly businessId: string | null
  readonly source: string
  readonly type: string
  readonly receivedAt: number
  readonly body: string
  readonly dedupeKey: string | null
  readonly meta: string
  readonly entityId: string | null
}

export interface WriterConfig {
  readonly filename: string
  readonly synchronous: "FULL" | "NORMAL"
  readonly busyTimeoutMillis: number
  readonly dedupeWindowMillis: number
}

/**
 * main -> writer: one batch = the appends of one transaction, one row list per append call.
 * `groups` is `JSON.stringify(ReadonlyArray<ReadonlyArray<Row>>)`: one string is far cheaper
 * to post than the structured clone of hundreds of small objects (main-thread time).
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

/** writer -> main. */
export type WriterMessage =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "OpenFailed"; readonly error: string }
  | { readonly _tag: "Written"; readonly seq: number; readonly outcomes: ReadonlyArray<GroupOutcome> }

const messageOf = (cause: unknown) => cause instanceof Error ? cause.message : String(cause)

const run = (port: NonNullable<typeof parentPort>, config: WriterConfig) => {
  let client: Database.Database
  try {
    client = new Database(config.filename)
    client.pragma("journal_mode = WAL")
    client.pragma(`synchronous = ${config.synchronous}`)
    client.pragma(`busy_timeout = ${config.busyTimeoutMillis}`)
    client.pragma("foreign_keys = ON")
  } catch (cause) {
    port.postMessage({ _tag: "OpenFailed", error: messageOf(cause) } satisfies WriterMessage)
    return
  }
  const dedupeWindow = config.dedupeWindowMillis
  const insert = client.prepare(
    `INSERT INTO records (id, tenant, app_id, business_id, source, type, received_at, body, dedupe_key, meta, entity_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
  )
  const byDedupeKey = client.prepare<[string, string, number], { offset: number; id: string }>(
    `SELECT "offset", id FROM records WHERE tenant = ? AND dedupe_key = ? AND received_at >= ? ORDER BY "offset" LIMIT 1`
  )
  const byId = client.prepare<[string], { offset: number; id: string }>(`SELECT "offset", id FROM records WHERE id = ?`)
  const decision = client.prepare(
    `INSERT INTO dedupe_decisions (decided_at, tenant, reason, dedupe_key, original_offset, id, type, source, received_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
  )
  const commit = client.prepare(`INSERT INTO commits (committed_at, requests, appended, duplicates) VALUES (?, ?, ?, ?)`)

  /** One transaction for the given append calls; throws (rolled back) if any statement fails. */
  const writeGroups = client.transaction((groups: ReadonlyArray<ReadonlyArray<Row>>, now: number) => {
    let appended = 0
    let duplicates = 0
    const out: Array<GroupOutcome> = []
    for (const rows of groups) {
      const offsets: Array<number> = []
      const duplicateIds: Array<string | null> = []
      for (const row of rows) {
        const byIdRow = row.idGiven ? byId.get(row.id) : undefined
        const original = byIdRow ??
          (row.dedupeKey === null ? undefined : byDedupeKey.get(row.tenant, row.dedupeKey, row.receivedAt - dedupeWindow))
        if (original !== undefined) {
          duplicates++
          decision.run(
            now, row.tenant, byIdRow === undefined ? "dedupeKey" : "id", row.dedupeKey, original.offset, row.id, row.type, row.source, row.receivedAt
          )
          offsets.push(-original.offset)
          duplicateIds.push(original.id)
        } else {
          appended++
          const info = insert.run(
            row.id, row.tenant, row.appId, row.businessId, row.source, row.type, row.receivedAt, row.body, row.dedupeKey, row.meta, row.entityId
          )
          offsets.push(Number(info.lastInsertRowid))
          duplicateIds.push(null)
        }
      }
      out.push({ offsets, duplicateIds })
    }
    commit.run(now, groups.length, appended, duplicates)
    return out
  })

  port.on("message", (message: WriteRequest | "close") => {
    if (message === "close") {
      port.close()
      client.close()
      return
    }
    let outcomes: ReadonlyArray<GroupOutcome>
    const groups = JSON.parse(message.groups) as ReadonlyArray<ReadonlyArray<Row>>
    try {
      outcomes = writeGroups.immediate(groups, message.now)
    } catch {
      // One bad append call must not fail its neighbours: retry each alone.
      outcomes = groups.map((rows): GroupOutcome => {
        try {
          return writeGroups.immediate([rows], message.now)[0]!
        } catch (cause) {
          return { error: messageOf(cause) }
        }
      })
    }
    port.postMessage({ _tag: "Written", seq: message.seq, outcomes } satisfies WriterMessage)
  })
  port.postMessage({ _tag: "Ready" } satisfies WriterMessage)
}

if (parentPort !== null) run(parentPort, workerData as WriterConfig)
