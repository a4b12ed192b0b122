/**
 * The hot path: domain events to rows, with raw prepared statements on the better-sqlite3
 * handle (drizzle owns the schema and the read queries). Everything here is synchronous and
 * runs inside the caller's transaction, which also saves the checkpoint. Two steps: ./plan.ts
 * decodes a record into statement parameters (pure, any thread), `execute` runs them.
 *
 * Conflict rule (one SQL upsert per row, `newer` in ../projections/Projection.ts): an observation replaces the row when
 * - both carry a parseable updatedAt and they differ: the newer updatedAt wins;
 * - otherwise (equal, or absent/unparseable on either side): the later log position
 *   (offset, then index inside the record) wins.
 * Records already applied (table applied_records, keyed by offset) are skipped, so replays and
 * redeliveries apply once; a record delivered out of log order for the first time still goes
 * through the rule, which makes the result independent of delivery order whenever the rule is a
 * total order for the entity (see README). Deletes write tombstones under the same rule; a tombstone's
 * updatedAt is the delete's own updatedAt when it carries one, else the time the delete was
 * received, so a sync observation older than the delete does not resurrect the entity.
 * Order and bill lines are cleared and written after their parent's upsert, only when the
 * parent row then holds the same event (`lines` in ../projections/Projection.ts), so lines always match the version
 * of the order or bill the table holds.
 */
import type Database from "better-sqlite3"
import { DomainEvent } from "@ocs/protocol"
import * as Changes from "./changes.ts"
import * as Projections from "../projections/index.ts"
import { emptyPlan, type Plan, planDecoded, type ProjectableRecord } from "./plan.ts"

export type { ProjectableRecord } from "./plan.ts"

export interface ApplyStats {
  /** Records applied (records seen before are skipped and not counted). */
  readonly records: number
  readonly events: number
  /** Changes found and written to the change outbox (./changes.ts). */
  readonly changes?: number | undefined
}

export interface Options {
  /**
   * The file started empty and only this projector's `execute` writes it (a rebuild): a batch
   * whose offsets all increase past every offset executed before cannot hold a record applied
   * before, so its offsets are recorded with one statement instead of one check per record.
   */
  readonly fresh?: boolean | undefined
}

/** Prepares the statements once per connection; `apply` and `execute` are then plain loops. */
export const make = (client: Database.Database, options?: Options) => {
  const statements = Projections.statements.map((statement) => client.prepare(statement.sql))
  const applied = client.prepare("INSERT OR IGNORE INTO applied_records (offset) VALUES (?)")
  const appliedBulk = client.prepare("INSERT INTO applied_records (offset) SELECT value FROM json_each(?)")
  const fresh = options?.fresh === true
  const changes = Changes.make(client)
  /** Fresh file: the highest offset `execute` has seen (every applied offset is at most this). */
  let highest = -Infinity

  /** Records the offsets with one statement when none can have been applied before (see `fresh`). */
  const allNew = (records: ReadonlyArray<ProjectableRecord>): boolean => {
    if (!fresh) return false
    let last = highest
    let increasing = true
    for (let r = 0; r < records.length; r++) {
      const offset = records[r]!.offset
      if (!(offset > last)) increasing = false
      last = Math.max(last, offset)
    }
    highest = last
    if (increasing) appliedBulk.run(JSON.stringify(records.map((record) => record.offset)))
    return increasing
  }

  /**
   * Runs the plans of `records` (planned in the same order, possibly on another thread, and
   * possibly in several consecutive parts), skipping the records applied before (replay,
   * redelivery). Synchronous: call inside a transaction.
   */
  const execute = (records: ReadonlyArray<ProjectableRecord>, plans: ReadonlyArray<Plan>): ApplyStats => {
    const skipCheck = allNew(records)
    let events = 0
    let count = 0
    let r = 0
    for (const { ends, events: perRecord, ops, params } of plans) {
      let start = 0
      for (let i = 0; i < ends.length; i++, r++) {
        const end = ends[i]!
        if (skipCheck || applied.run(records[r]!.offset).changes !== 0) {
          count++
          events += perRecord[i]!
          for (let k = start; k < end; k++) statements[ops[k]!]!.run(params[k]!)
        }
        start = end
      }
    }
    if (r !== records.length) throw new Error(`plans cover ${r} records, expected ${records.length}`)
    return { records: count, events }
  }

  const scratch = emptyPlan()
  const clear = () => {
    scratch.ops.length = 0
    scratch.params.length = 0
    scratch.ends.length = 0
    scratch.events.length = 0
  }

  /**
   * Decodes and applies records in the given order. Synchronous: call inside a transaction.
   * Records past `detectAfter` (an offset) also go through change detection (./changes.ts);
   * undefined: none do.
   */
  const apply = (records: ReadonlyArray<ProjectableRecord>, detectAfter?: number): ApplyStats => {
    let events = 0
    let count = 0
    let found = 0
    for (let r = 0; r < records.length; r++) {
      const record = records[r]!
      // Applied before (replay, redelivery): skip the whole record, without decoding it.
      if (applied.run(record.offset).changes === 0) continue
      count++
      clear()
      const decoded = DomainEvent.decode(record)
      const detect = detectAfter !== undefined && record.offset > detectAfter
      const probes = detect ? changes.before(record, decoded) : undefined
      planDecoded(scratch, record, decoded)
      for (let k = 0; k < scratch.ops.length; k++) statements[scratch.ops[k]!]!.run(scratch.params[k]!)
      if (detect) found += changes.after(record, decoded, probes!)
      events += scratch.events[0]!
    }
    clear()
    return detectAfter === undefined ? { records: count, events } : { records: count, events, changes: found }
  }

  /**
   * Kafka mode: another copy of a record applied at another position, not applied again; past
   * `detectAfter`, a page's ids still count for the full pass that read it (./changes.ts `copy`).
   * Synchronous: call inside the transaction of the batch.
   */
  const copy = (record: ProjectableRecord, detectAfter?: number): void => {
    if (detectAfter === undefined || record.offset <= detectAfter || record.source !== "sync") return
    changes.copy(record, DomainEvent.decode(record))
  }

  return { apply, execute, copy }
}

export type Projector = ReturnType<typeof make>
