/**
 * The read API over the PostgreSQL copy (docs/architecture.md §4.34): the very queries the SQLite
 * file answers (the registry's `queries`, ../ReadApi.ts), not a second set to keep in step.
 *
 * Those queries are synchronous functions over a better-sqlite3 connection. Here they run over a
 * stand-in connection that answers each statement from a tape: a statement the tape does not hold
 * yet stops the function (`Wanted`); the statement is sent to PostgreSQL (placeholders, `LIKE`
 * and `json_each` translated), its rows go on the tape, and the function runs again from the
 * start. A query is deterministic given its answers, so the last run returns what the same
 * function returns over the SQLite file, with one round trip per statement it makes.
 *
 * Differences: `LIKE` becomes `ILIKE` (SQLite's LIKE folds ASCII case; ILIKE folds all of
 * Unicode), and text orders by the database's collation (`C` in the tests, as SQLite's bytes).
 * Failures are the read API's `SqliteError`, with `filename` `postgres:<schema>`.
 */
import { SqliteError } from "@ocs/sqlite"
import { drizzle } from "drizzle-orm/better-sqlite3"
import { Effect, Option } from "effect"
import * as IdMaps from "../internal/idMaps.ts"
import * as Projections from "../projections/index.ts"
import { counter, type ReadApi, reads } from "../ReadApi.ts"
import type { PostgresStore } from "./PostgresStore.ts"
import { translate } from "./Statements.ts"

type Mode = "objects" | "arrays" | "pluck"

/** A statement the tape does not hold yet. */
class Wanted {
  readonly sql: string
  readonly params: ReadonlyArray<unknown>
  readonly mode: Mode
  constructor(sql: string, params: ReadonlyArray<unknown>, mode: Mode) {
    this.sql = sql
    this.params = params
    this.mode = mode
  }
}

/** The SQLite text of a read statement, in PostgreSQL. */
export const toPostgres = (sql: string): string =>
  translate(
    sql
      .replace(/json_each\(\?\)/g, "jsonb_array_elements_text(?::jsonb)")
      .replace(/ LIKE /g, " ILIKE ")
  )

interface Tape {
  readonly answers: Array<unknown>
  next: number
}

/** A better-sqlite3 connection as far as drizzle and the read queries use one, answering from the tape. */
const standIn = (tape: () => Tape) => {
  const answer = (sql: string, mode: Mode, one: boolean) => (...params: Array<unknown>) => {
    if (params.length === 1 && typeof params[0] === "object" && params[0] !== null) throw new Error("named parameters are not supported here")
    const t = tape()
    if (t.next >= t.answers.length) throw new Wanted(sql, params, mode)
    const rows = t.answers[t.next++] as Array<unknown>
    return one ? rows[0] : rows
  }
  const statement = (sql: string) => ({
    all: answer(sql, "objects", false),
    get: answer(sql, "objects", true),
    run: () => {
      throw new Error("the read API does not write")
    },
    raw: () => ({ all: answer(sql, "arrays", false), get: answer(sql, "arrays", true) }),
    pluck: () => ({ all: answer(sql, "pluck", false), get: answer(sql, "pluck", true) })
  })
  return { prepare: statement }
}

/** The read API over an open PostgreSQL store. */
export const make = (store: PostgresStore): ReadApi => {
  let tape: Tape = { answers: [], next: 0 }
  const client = standIn(() => tape)
  const q = Projections.queries(drizzle(client as never))
  const idMap = IdMaps.make(client as never)
  // The SQLite file's counter, its statements answered from the tape like every read.
  const n = counter(client as never)

  const fail = (operation: string) => (error: unknown) =>
    new SqliteError({ filename: `postgres:${store.schema}`, operation, message: error instanceof Error ? error.message : String(error), cause: error })

  /** Runs a synchronous query until every statement it makes has its answer. */
  const run = <A>(operation: string, f: () => A): Effect.Effect<A, SqliteError> =>
    Effect.tryPromise({
      try: async () => {
        const answers: Array<unknown> = []
        for (;;) {
          tape = { answers, next: 0 }
          try {
            return f()
          } catch (error) {
            if (!(error instanceof Wanted)) throw error
            const text = toPostgres(error.sql)
            const values = [...error.params]
            const rows: Array<unknown> = error.mode === "objects"
              ? (await store.pool.query({ text, values })).rows
              : (await store.pool.query({ text, values, rowMode: "array" })).rows
            answers.push(error.mode === "pluck" ? rows.map((row) => (row as Array<unknown>)[0]) : rows)
          }
        }
      },
      catch: fail(operation)
    })

  const many = <A extends ReadonlyArray<unknown>, R>(name: string, f: (...args: A) => R) => (...args: A) => run(name, () => f(...args))
  const one = <A extends ReadonlyArray<unknown>, R>(name: string, f: (...args: A) => R | undefined) => (...args: A) =>
    Effect.map(run(name, () => f(...args)), Option.fromUndefinedOr)

  return {
    ...reads(q, idMap, many, one),
    counts: many("counts", n.counts),
    rowCounts: run("rowCounts", n.rowCounts),
    digest: (tenant = "all") => Effect.mapError(store.digestOf(tenant === "all" ? undefined : tenant), fail("digest"))
  }
}
