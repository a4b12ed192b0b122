/**
 * What the log can prove about itself, read once in offset order (part of `verify`):
 *
 * - offsets strictly increase: per partition over Kafka (`partition * 2^40 + offset`); in a
 *   SQLite log they are also contiguous from the first one read (a gap is a record deleted
 *   after it was written; a refused duplicate takes no offset);
 * - record ids are unique (checked in a temporary SQLite table, so memory stays bounded);
 * - a tenant's dedupe key appears once within the dedupe window (the writer refuses a second
 *   one; one here means the log was written around its dedupe);
 * - webhook and sync bodies are JSON, and their domain events decode.
 *
 * Records hold no hashes, so a body altered in place with valid JSON cannot be detected here;
 * comparing the read models (the rest of `verify`) catches what such a change projects.
 */
import { DomainEvent } from "@ocs/protocol"
import * as Json from "@ocs/protocol/Json"
import Database from "better-sqlite3"
import { Effect, Result, Stream } from "effect"
import * as NodePath from "node:path"
import { LogSource } from "./LogSource.ts"
import type * as Progress from "./Progress.ts"
import { CommandFailed } from "./ReplayError.ts"

export interface Options {
  readonly tenant?: `${string}:${string}` | undefined
  readonly untilOffset?: number | undefined
  /** Of the dedupe keys (default a day, the event log's). */
  readonly dedupeWindowMillis: number
  /** A folder for the temporary table of ids. */
  readonly workDir: string
  readonly maxProblems: number
  readonly progress?: Progress.Mode | undefined
}

export interface Problem {
  readonly offset: number
  readonly kind: "offset-order" | "offset-gap" | "duplicate-id" | "duplicate-dedupe-key" | "undecodable-body"
  readonly detail: string
}

export interface Report {
  readonly records: number
  readonly partitions: number
  readonly problems: number
  readonly byKind: Readonly<Record<Problem["kind"], number>>
  /** The first `maxProblems`. */
  readonly details: ReadonlyArray<Problem>
}

const PARTITION = 2 ** 40

export const run = Effect.fn("LogIntegrity.run")(function*(options: Options) {
  const source = yield* LogSource
  const ids = yield* Effect.acquireRelease(
    Effect.sync(() => {
      const db = new Database(NodePath.join(options.workDir, "ids.sqlite"))
      db.pragma("journal_mode = OFF")
      db.pragma("synchronous = OFF")
      db.exec("CREATE TABLE ids (id TEXT PRIMARY KEY, offset INTEGER NOT NULL) WITHOUT ROWID")
      return db
    }),
    (db) => Effect.sync(() => db.close())
  )
  const insert = ids.prepare("INSERT OR IGNORE INTO ids (id, offset) VALUES (?, ?)")
  const firstOffset = ids.prepare("SELECT offset FROM ids WHERE id = ?").pluck()

  const byKind: Record<Problem["kind"], number> = { "offset-order": 0, "offset-gap": 0, "duplicate-id": 0, "duplicate-dedupe-key": 0, "undecodable-body": 0 }
  const details: Array<Problem> = []
  const report = (p: Problem) => {
    byKind[p.kind]++
    if (details.length < options.maxProblems) details.push(p)
  }
  const lastByPartition = new Map<number, number>()
  // (tenant, dedupe key) -> receivedAt, oldest first; entries past the window are dropped.
  const dedupe = new Map<string, { readonly at: number; readonly offset: number }>()
  // Contiguity says something only about the whole log, in SQLite mode.
  const contiguous = source.backend === "sqlite" && options.tenant === undefined
  let records = 0

  const check = (record: import("@ocs/event-log").LogRecord.LogRecord) => {
    records++
    const partition = Math.floor(record.offset / PARTITION)
    const last = lastByPartition.get(partition)
    if (last !== undefined && record.offset <= last) {
      report({ offset: record.offset, kind: "offset-order", detail: `offset ${record.offset} after ${last}` })
    } else if (last !== undefined && contiguous && record.offset !== last + 1) {
      report({ offset: record.offset, kind: "offset-gap", detail: `offsets ${last + 1}..${record.offset - 1} are missing` })
    }
    lastByPartition.set(partition, Math.max(last ?? record.offset, record.offset))

    if (insert.run(record.id, record.offset).changes === 0) {
      report({ offset: record.offset, kind: "duplicate-id", detail: `id ${record.id} also at offset ${String(firstOffset.get(record.id))}` })
    }

    if (record.dedupeKey !== null) {
      const key = `${record.appId}:${record.businessId ?? ""}\u0000${record.dedupeKey}`
      for (const [k, v] of dedupe) {
        if (v.at >= record.receivedAt - options.dedupeWindowMillis) break
        dedupe.delete(k)
      }
      const seen = dedupe.get(key)
      if (seen !== undefined && record.receivedAt - seen.at < options.dedupeWindowMillis) {
        report({ offset: record.offset, kind: "duplicate-dedupe-key", detail: `dedupe key ${JSON.stringify(record.dedupeKey)} also at offset ${seen.offset}, within the window` })
      }
      dedupe.delete(key)
      dedupe.set(key, { at: record.receivedAt, offset: record.offset })
    }

    if (record.source !== "system") {
      const parsed = Json.parse(record.body)
      if (Result.isFailure(parsed)) {
        report({ offset: record.offset, kind: "undecodable-body", detail: `body is not JSON: ${parsed.failure.message.slice(0, 120)}` })
      } else {
        try {
          DomainEvent.decode(record)
        } catch (e) {
          report({ offset: record.offset, kind: "undecodable-body", detail: `events do not decode: ${e instanceof Error ? e.message.slice(0, 120) : String(e)}` })
        }
      }
    }
  }

  yield* source.records({ tenant: options.tenant, untilOffset: options.untilOffset }).pipe(
    Stream.runForEachArray((page) =>
      Effect.try({
        try: () => ids.transaction(() => {
          for (const record of page) check(record)
        })(),
        catch: (cause) => new CommandFailed({ message: `checking the log: ${cause instanceof Error ? cause.message : String(cause)}`, cause })
      })
    )
  )
  const problems = Object.values(byKind).reduce((a, b) => a + b, 0)
  return { records, partitions: lastByPartition.size, problems, byKind, details } satisfies Report
})
