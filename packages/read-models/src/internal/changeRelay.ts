/**
 * The change relay (docs/architecture.md §4.14): the changes the projection found wait in
 * `change_outbox` (written in the transaction of the record that revealed them); this appends
 * them to the log as `changes` records, oldest first, then forgets them.
 */
import { EventLog, TraceContext } from "@ocs/event-log"
import { EngineRecord } from "@ocs/protocol"
import type { SqliteDatabase } from "@ocs/sqlite"
import { Effect } from "effect"
import type { Accepts } from "./options.ts"

interface OutboxRow {
  readonly seq: number
  readonly app_id: string
  readonly business_id: string
  readonly source_record_id: string
  readonly source_offset: number
  readonly body: string
  readonly trace: string | null
}

/** Rows taken from the outbox per append. */
const CHUNK = 500

export const make = Effect.fnUntraced(function*(handle: SqliteDatabase.Handle) {
  const outbox = yield* handle.use("prepare", (_, client) => ({
    take: client.prepare<[number], OutboxRow>(
      "SELECT seq, app_id, business_id, source_record_id, source_offset, body, trace FROM change_outbox ORDER BY seq LIMIT ?"
    ),
    drop: client.prepare("DELETE FROM change_outbox WHERE seq <= ?")
  }))

  /**
   * Appends the outbox to the log (dedupe key `changes:<record that revealed them>`, so a relay
   * repeated after a crash appends nothing twice) and forgets it. `relays` says whose changes
   * this process appends; the others are forgotten (with several servers, the tenant's owner).
   */
  const relay = (relays: Accepts | undefined) => Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    let relayed = 0
    for (;;) {
      const taken = yield* handle.use("changeOutbox", () => outbox.take.all(CHUNK))
      if (taken.length === 0) return relayed
      const rows = relays === undefined ? taken : taken.filter((r) => relays(r.app_id, r.business_id))
      if (rows.length > 0) yield* log.append(rows.map((r) => ({
        appId: r.app_id,
        businessId: r.business_id,
        source: "sync" as const,
        type: EngineRecord.CHANGES_TYPE,
        body: r.body,
        dedupeKey: EngineRecord.changesDedupeKey(r.source_record_id),
        // The revealing append's trace: a plugin's handling links to it (docs/architecture.md §4.17).
        meta: EngineRecord.changesMeta({ recordId: r.source_record_id, offset: r.source_offset }, r.trace === null ? {} : { [TraceContext.metaKey]: r.trace })
      })))
      // Forgotten only once durable in the log; a crash before this appends them again, and
      // the log drops them by their dedupe key.
      yield* handle.transaction("changeOutbox", () => outbox.drop.run(taken[taken.length - 1]!.seq))
      relayed += rows.length
    }
  }).pipe(Effect.withSpan("ReadModels.relayChanges"))

  return { relay }
})
