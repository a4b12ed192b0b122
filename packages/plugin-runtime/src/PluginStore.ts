/**
 * The plugins' own SQLite file (e.g. `plugins.sqlite`): a checkpoint per plugin, the key-value
 * store (per plugin and tenant), and dead letters. Separate from the event log and the read
 * models, so plugins never take a lock either of them needs.
 */
import { Clock, Effect, Option, Result, type Scope } from "effect"
import { Json } from "@ocs/protocol"
import { SqliteDatabase } from "@ocs/sqlite"
import * as NodeUrl from "node:url"
import { type Capabilities, PluginError } from "@ocs/plugin-sdk"

type KeyValue = Capabilities.KeyValue
type Tenant = Capabilities.Tenant
type PluginStoreError = PluginError.PluginStoreError
const { PluginStoreError } = PluginError

export interface DeadLetter {
  readonly id: number
  readonly plugin: string
  readonly eventId: string
  readonly eventTag: string
  readonly appId: string
  readonly businessId: string | null
  readonly offset: number
  /** The log record the event was decoded from (re-drive decodes it again). */
  readonly record: unknown
  readonly error: string
  /** Attempts made so far, re-drives included. */
  readonly attempts: number
  readonly firstFailedAt: number
  readonly lastFailedAt: number
}

export interface StoredCheckpoint {
  readonly checkpoint: string
  readonly offset: number | null
}

export interface PluginStore {
  readonly filename: string
  readonly checkpoint: (plugin: string) => Effect.Effect<Option.Option<StoredCheckpoint>, PluginStoreError>
  readonly saveCheckpoint: (plugin: string, checkpoint: string, offset: number) => Effect.Effect<void, PluginStoreError>
  readonly kv: (plugin: string, tenant: Tenant) => KeyValue
  readonly addDeadLetter: (entry: Omit<DeadLetter, "id" | "firstFailedAt" | "lastFailedAt">) => Effect.Effect<void, PluginStoreError>
  readonly deadLetters: (plugin?: string) => Effect.Effect<ReadonlyArray<DeadLetter>, PluginStoreError>
  readonly updateDeadLetter: (id: number, error: string, moreAttempts: number) => Effect.Effect<void, PluginStoreError>
  readonly removeDeadLetter: (id: number) => Effect.Effect<void, PluginStoreError>
  readonly countDeadLetters: (plugin: string) => Effect.Effect<number, PluginStoreError>
  /**
   * Kafka mode: true when the record is another copy (same tenant and dedupe key, another
   * position) of a fact this plugin was delivered within the dedupe window; the first call for
   * a key remembers its position. A record seen again at its own position (redelivered after a
   * crash before its checkpoint) is not a copy. Keys older than the window are forgotten.
   */
  readonly repeated: (plugin: string, record: Keyed) => Effect.Effect<boolean, PluginStoreError>
}

/** What `repeated` reads of a log record. */
export interface Keyed {
  readonly offset: number
  readonly appId: string
  readonly businessId: string | null
  readonly dedupeKey: string | null
  readonly receivedAt: number
}

/** How long a dedupe key is remembered (the event log's own dedupe window). */
export const DEDUPE_WINDOW_MILLIS = 24 * 3600 * 1000

/** The drizzle-kit migrations folder of plugin store files (run at open; schema: ./internal/pluginTables.ts). */
export const migrationsFolder = NodeUrl.fileURLToPath(new URL("../drizzle", import.meta.url))

interface DeadLetterRow {
  id: number
  plugin: string
  event_id: string
  event_tag: string
  app_id: string
  business_id: string | null
  record_offset: number
  record: string
  error: string
  attempts: number
  first_failed_at: number
  last_failed_at: number
}

const parseJson = (text: string): unknown => {
  const r = Json.parse(text)
  return Result.isSuccess(r) ? r.success : text
}

/**
 * Opens (creating and migrating) the store; closed with the scope. Timestamps (`updated_at`,
 * dead letters' failure times) come from the `Clock` of the calling fiber, so `TestClock`
 * drives them.
 */
export const make = Effect.fnUntraced(function*(options: { readonly filename: string }): Effect.fn.Return<PluginStore, PluginStoreError, Scope.Scope> {
  const handle = yield* SqliteDatabase.make({ filename: options.filename, migrationsFolder, synchronous: "NORMAL" }).pipe(
    Effect.mapError((e) => new PluginStoreError({ operation: "open", message: e.message }))
  )
  const use = <A>(operation: string, f: (db: typeof handle.client) => A): Effect.Effect<A, PluginStoreError> =>
    handle.use(operation, (_, client) => f(client)).pipe(Effect.mapError((e) => new PluginStoreError({ operation, message: e.message })))
  /** `use` with the current time (ms) of the fiber's clock. */
  const useAt = <A>(operation: string, f: (now: number) => A): Effect.Effect<A, PluginStoreError> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => use(operation, () => f(now)))

  const statements = yield* use("prepare", (db) => ({
    checkpoint: db.prepare<[string], { checkpoint: string; last_offset: number | null }>("SELECT checkpoint, last_offset FROM plugin_checkpoints WHERE plugin = ?"),
    saveCheckpoint: db.prepare(
      "INSERT INTO plugin_checkpoints (plugin, checkpoint, last_offset, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (plugin) DO UPDATE SET checkpoint = excluded.checkpoint, last_offset = excluded.last_offset, updated_at = excluded.updated_at"
    ),
    kvGet: db.prepare<[string, string, string, string], { value: string }>("SELECT value FROM plugin_kv WHERE plugin = ? AND app_id = ? AND business_id = ? AND key = ?"),
    kvSet: db.prepare(
      "INSERT INTO plugin_kv (plugin, app_id, business_id, key, value, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (plugin, app_id, business_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at"
    ),
    kvDelete: db.prepare("DELETE FROM plugin_kv WHERE plugin = ? AND app_id = ? AND business_id = ? AND key = ?"),
    kvList: db.prepare<[string, string, string, string, string], { key: string; value: string }>(
      "SELECT key, value FROM plugin_kv WHERE plugin = ? AND app_id = ? AND business_id = ? AND substr(key, 1, length(?)) = ? ORDER BY key"
    ),
    addDeadLetter: db.prepare(
      `INSERT INTO plugin_dead_letters (plugin, event_id, event_tag, app_id, business_id, record_offset, record, error, attempts, first_failed_at, last_failed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (plugin, event_id) DO UPDATE SET error = excluded.error, attempts = attempts + excluded.attempts, last_failed_at = excluded.last_failed_at`
    ),
    deadLetters: db.prepare<[string | null, string | null], DeadLetterRow>("SELECT * FROM plugin_dead_letters WHERE (? IS NULL OR plugin = ?) ORDER BY id"),
    updateDeadLetter: db.prepare("UPDATE plugin_dead_letters SET error = ?, attempts = attempts + ?, last_failed_at = ? WHERE id = ?"),
    removeDeadLetter: db.prepare("DELETE FROM plugin_dead_letters WHERE id = ?"),
    countDeadLetters: db.prepare<[string], { n: number }>("SELECT count(*) AS n FROM plugin_dead_letters WHERE plugin = ?"),
    rememberKey: db.prepare<[string, string, string, string, number, number]>(
      "INSERT OR IGNORE INTO plugin_applied_dedupe_keys (plugin, app_id, business_id, dedupe_key, offset, received_at) VALUES (?, ?, ?, ?, ?, ?)"
    ),
    firstOffset: db.prepare<[string, string, string, string], { offset: number }>(
      "SELECT offset FROM plugin_applied_dedupe_keys WHERE plugin = ? AND app_id = ? AND business_id = ? AND dedupe_key = ?"
    ),
    pruneKeys: db.prepare<[number]>("DELETE FROM plugin_applied_dedupe_keys WHERE received_at < ?")
  }))
  let prunedAt = 0

  const kv = (plugin: string, tenant: Tenant): KeyValue => {
    const scope = [plugin, tenant.appId, tenant.businessId ?? ""] as const
    return {
      get: (key) => use("kv get", () => Option.map(Option.fromNullishOr(statements.kvGet.get(...scope, key)), (r) => parseJson(r.value))),
      set: (key, value) => useAt("kv set", (now) => void statements.kvSet.run(...scope, key, Json.stringify(value), now)),
      delete: (key) => use("kv delete", () => void statements.kvDelete.run(...scope, key)),
      list: (prefix = "") => use("kv list", () => statements.kvList.all(...scope, prefix, prefix).map((r) => ({ key: r.key, value: parseJson(r.value) })))
    }
  }

  const toDeadLetter = (r: DeadLetterRow): DeadLetter => ({
    id: r.id,
    plugin: r.plugin,
    eventId: r.event_id,
    eventTag: r.event_tag,
    appId: r.app_id,
    businessId: r.business_id,
    offset: r.record_offset,
    record: parseJson(r.record),
    error: r.error,
    attempts: r.attempts,
    firstFailedAt: r.first_failed_at,
    lastFailedAt: r.last_failed_at
  })

  return {
    filename: options.filename,
    checkpoint: (plugin) =>
      use("read checkpoint", () => Option.map(Option.fromNullishOr(statements.checkpoint.get(plugin)), (r) => ({ checkpoint: r.checkpoint, offset: r.last_offset }))),
    saveCheckpoint: (plugin, checkpoint, offset) => useAt("save checkpoint", (now) => void statements.saveCheckpoint.run(plugin, checkpoint, offset, now)),
    kv,
    addDeadLetter: (e) =>
      useAt("add dead letter", (now) => {
        statements.addDeadLetter.run(e.plugin, e.eventId, e.eventTag, e.appId, e.businessId, e.offset, Json.stringify(e.record), e.error, e.attempts, now, now)
      }),
    deadLetters: (plugin) => use("list dead letters", () => statements.deadLetters.all(plugin ?? null, plugin ?? null).map(toDeadLetter)),
    updateDeadLetter: (id, error, moreAttempts) => useAt("update dead letter", (now) => void statements.updateDeadLetter.run(error, moreAttempts, now, id)),
    removeDeadLetter: (id) => use("remove dead letter", () => void statements.removeDeadLetter.run(id)),
    countDeadLetters: (plugin) => use("count dead letters", () => statements.countDeadLetters.get(plugin)?.n ?? 0),
    repeated: (plugin, record) =>
      useAt("dedupe", (now) => {
        if (now - prunedAt >= 60_000) {
          prunedAt = now
          statements.pruneKeys.run(now - DEDUPE_WINDOW_MILLIS)
        }
        if (record.dedupeKey === null) return false
        const key = [plugin, record.appId, record.businessId ?? "", record.dedupeKey] as const
        if (statements.rememberKey.run(...key, record.offset, record.receivedAt).changes !== 0) return false
        return statements.firstOffset.get(...key)?.offset !== record.offset
      })
  }
})
