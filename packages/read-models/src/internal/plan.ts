/**
 * The pure half of the projector: a log record to the rows it writes, as statement parameter
 * lists of primitives (string, number, null), without touching a database. Each decoded event
 * goes to the rule of the projection that handles it (../projections/index.ts). The conflict
 * rule lives in the SQL of the statements (./projector.ts executes them), so a plan never
 * depends on what a file holds: the same record always plans the same rows, on any thread.
 *
 * Opens no database: the rebuild's planner thread (./plan.worker.ts) loads it.
 */
import { DomainEvent, EngineRecord } from "@ocs/protocol"
import * as Projections from "../projections/index.ts"

export type { Param, Plan, ProjectableRecord } from "./planTypes.ts"
import type { Plan, ProjectableRecord } from "./planTypes.ts"

export const emptyPlan = (): Plan => ({ ops: [], params: [], ends: [], events: [] })

/** Decodes one record (`DomainEvent.decode`) and appends its rows to `plan`. */
export const planRecord = (plan: Plan, record: ProjectableRecord): void => planDecoded(plan, record, DomainEvent.decode(record))

/** Appends the rows of a record already decoded (`DomainEvent.decode(record)`) to `plan`. */
export const planDecoded = (plan: Plan, record: ProjectableRecord, decoded: ReadonlyArray<DomainEvent.DomainEvent>): void => {
  // A change a webhook revealed (docs/architecture.md §4.14) is for plugins: the webhook's own
  // record wrote its rows, and writing them again at the changes record's place would move a
  // tombstone's time (a delete's updatedAt is when it was received).
  const told = record.type === EngineRecord.CHANGES_TYPE
  for (let i = 0; i < decoded.length; i++) {
    const event = decoded[i]!
    if (told && event.source === "webhook") continue
    Projections.applyEvent(plan, record, event, i)
  }
  plan.ends.push(plan.ops.length)
  plan.events.push(decoded.length)
}

/** The plan of a run of records, in order. */
export const planRecords = (records: ReadonlyArray<ProjectableRecord>): Plan => {
  const plan = emptyPlan()
  for (let r = 0; r < records.length; r++) planRecord(plan, records[r]!)
  return plan
}

// The planner thread's messages (./planner.ts, ./plan.worker.ts).

/** Records as parallel arrays of primitives: far cheaper to post than thousands of objects. */
export interface Columns {
  readonly offset: Array<number>
  readonly id: Array<string>
  readonly appId: Array<string>
  readonly businessId: Array<string | null>
  readonly source: Array<ProjectableRecord["source"]>
  readonly type: Array<string>
  readonly receivedAt: Array<number>
  readonly body: Array<string>
  readonly meta: Array<unknown>
}

/** A chunk's slot in `PlanRequest.claims`: who plans it (`posted`: the worker has sent its plan). */
export const Claim = { free: 0, worker: 1, caller: 2, posted: 3 } as const

/**
 * One batch, cut in chunks of `chunkSize` records. Each chunk is planned by whichever thread
 * first claims it (`Atomics.compareExchange` on `claims`, over a SharedArrayBuffer), so the
 * worker always has work queued and the other thread can still take chunks from the end.
 */
export interface PlanRequest {
  readonly batch: number
  readonly chunkSize: number
  readonly claims: Int32Array
  readonly records: Columns
}

export type PlanReply =
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Planned"; readonly batch: number; readonly chunk: number; readonly plan: Plan }
  | { readonly _tag: "Failed"; readonly batch: number; readonly chunk: number; readonly error: string }

export const toColumns = (records: ReadonlyArray<ProjectableRecord>): Columns => {
  const c: Columns = { offset: [], id: [], appId: [], businessId: [], source: [], type: [], receivedAt: [], body: [], meta: [] }
  for (const r of records) {
    c.offset.push(r.offset)
    c.id.push(r.id)
    c.appId.push(r.appId)
    c.businessId.push(r.businessId)
    c.source.push(r.source)
    c.type.push(r.type)
    c.receivedAt.push(r.receivedAt)
    c.body.push(r.body)
    c.meta.push(r.meta)
  }
  return c
}

export const fromColumns = (c: Columns): Array<ProjectableRecord> => {
  const records: Array<ProjectableRecord> = []
  for (let i = 0; i < c.offset.length; i++) {
    records.push({
      offset: c.offset[i]!, id: c.id[i]!, appId: c.appId[i]!, businessId: c.businessId[i]!, source: c.source[i]!,
      type: c.type[i]!, receivedAt: c.receivedAt[i]!, body: c.body[i]!, meta: c.meta[i]
    })
  }
  return records
}
