/**
 * Read models in PostgreSQL (docs/architecture.md §4.34): the same projection as the SQLite
 * file (the registry's plans, ../internal/plan.ts), written into a PostgreSQL schema.
 *
 * - `project(records, checkpoint)`: one transaction per batch writes the rows, the records'
 *   offsets (`applied_records`: a record is applied once, whatever redelivers it) and the
 *   checkpoint, which never moves backwards. Runs of rows of one statement go as one statement
 *   (./Statements.ts); a run is cut where a key repeats, so the conflict rule sees every
 *   observation in log order, as in SQLite.
 * - The schema is created and migrated (drizzle-kit's `drizzle-pg/`) when the store opens; the
 *   migrations' journal lives in the same schema, so each schema is a copy of its own.
 *
 * Not here yet: change detection (the change outbox), quarantine and Kafka-mode dedupe keys,
 * which the SQLite file has (../internal/projection.ts).
 */
import { Checkpoints, EventLog, type LogRecord } from "@ocs/event-log"
import { DomainEvent } from "@ocs/protocol"
import { eq } from "drizzle-orm"
import { drizzle } from "drizzle-orm/node-postgres"
import { migrate } from "drizzle-orm/node-postgres/migrator"
import { Duration, Effect, Option, Schema, Stream } from "effect"
import * as Crypto from "node:crypto"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { emptyPlan, type Param, type Plan, planDecoded, type ProjectableRecord } from "../internal/plan.ts"
import { projectedTables } from "../projections/index.ts"
import { quote } from "../projections/Projection.ts"
import { type PgStatement, statements, typeOf } from "./Statements.ts"
import * as Tables from "./Tables.ts"

/** The drizzle-kit migrations of the PostgreSQL tables (drizzle.pg.config.ts). */
export const migrationsFolder = fileURLToPath(new URL("../../drizzle-pg", import.meta.url))

export class PostgresStoreError extends Schema.TaggedError<PostgresStoreError>()("PostgresStoreError", {
  operation: Schema.String,
  message: Schema.String
}) {}

export interface Options {
  /** `postgres://user:password@host:port/database`. */
  readonly url: string
  /** The schema that holds the tables (created when missing). Default `ocs_read_models`. */
  readonly schema?: string | undefined
  /** Connections in the pool. Default 4. */
  readonly pool?: number | undefined
}

export const DEFAULT_SCHEMA = "ocs_read_models"

// bigint columns hold offsets and epoch milliseconds (< 2^53): numbers, as SQLite returns them.
// Ids are text in both dialects, so no id passes through a number.
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === pg.types.builtins.INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as never)) as typeof pg.types.getTypeParser
}

const identifier = (name: string): string => {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a plain PostgreSQL identifier: ${name}`)
  return name
}

/** At most this many rows in one batched statement (arrays stay a few hundred KiB). */
const RUN_ROWS = 1000

export interface ApplyStats {
  readonly records: number
  readonly events: number
  /** Statements sent (batched runs count once). */
  readonly statements: number
}

const fail = (operation: string) => (error: unknown) =>
  new PostgresStoreError({ operation, message: error instanceof Error ? error.message : String(error) })

/**
 * Runs a plan's rows (of the records `keep` admits) in as few statements as it can, with the
 * same result as running them one by one in log order, as the SQLite projector does:
 * - rows are grouped by the table they write, in log order within each table. Tables do not
 *   read each other, except that lines read their parent row; so
 * - every other table goes first, then the line tables, clears before lines. A line (or clear)
 *   applies only when the parent row holds its event, and after the batch's upserts the parent
 *   holds the winner of the conflict rule, the one event whose lines the one-by-one order leaves
 *   too (an earlier winner's lines are cleared by the later winner; a loser touches nothing).
 * - within a table, consecutive rows of one statement go as one statement (`unnest`); a run is
 *   cut where a row's key repeats, so the conflict rule sees every observation in log order.
 */
const execute = async (client: pg.PoolClient, plan: Plan, keep: (r: number) => boolean): Promise<number> => {
  const queues = new Map<string, Array<number>>()
  const lineQueues = new Map<string, Array<number>>()
  let r = 0
  let start = 0
  for (let i = 0; i < plan.ends.length; i++, r++) {
    const end = plan.ends[i]!
    if (keep(r)) {
      for (let k = start; k < end; k++) {
        const statement = statements[plan.ops[k]!]!
        const into = statement.lines ? lineQueues : queues
        let queue = into.get(statement.table)
        if (queue === undefined) into.set(statement.table, (queue = []))
        queue.push(k)
      }
    }
    start = end
  }
  let sent = 0
  const run = async (rows: ReadonlyArray<number>) => {
    let batch: { statement: Extract<PgStatement, { kind: "batch" }>; op: number; columns: Array<Array<Param>>; keys: Set<string>; rows: number } | undefined
    const flush = async () => {
      if (batch === undefined) return
      const current = batch
      batch = undefined
      await client.query({ name: `ocs:${current.statement.name}`, text: current.statement.sql, values: current.columns })
      sent++
    }
    for (const k of rows) {
      const op = plan.ops[k]!
      const params = plan.params[k]!
      const statement = statements[op]!
      if (statement.kind === "single") {
        await flush()
        await client.query({ name: `ocs:${statement.name}`, text: statement.sql, values: params as Array<Param> })
        sent++
        continue
      }
      const key = statement.key === 0 ? "" : JSON.stringify(params.slice(0, statement.key))
      if (batch !== undefined && (batch.op !== op || (statement.key > 0 && batch.keys.has(key)) || batch.rows >= RUN_ROWS)) await flush()
      if (batch === undefined) batch = { statement, op, columns: Array.from({ length: statement.width }, () => []), keys: new Set(), rows: 0 }
      const picked = statement.columns
      if (picked === undefined) for (let c = 0; c < params.length; c++) batch.columns[c]!.push(params[c]!)
      else for (let c = 0; c < picked.length; c++) batch.columns[c]!.push(params[picked[c]!]!)
      if (statement.key > 0) batch.keys.add(key)
      batch.rows++
    }
    await flush()
  }
  for (const rows of queues.values()) await run(rows)
  for (const rows of lineQueues.values()) {
    // clears first, then lines (see above); each keeps its log order
    const isClear = (k: number) => (statements[plan.ops[k]!] as { readonly columns?: unknown }).columns !== undefined
    await run(rows.filter(isClear))
    await run(rows.filter((k) => !isClear(k)))
  }
  return sent
}

/** Opens the store in the current scope: the pool, the schema, its migrations. */
export const make = Effect.fnUntraced(function*(options: Options) {
  const schema = identifier(options.schema ?? DEFAULT_SCHEMA)
  const pool = yield* Effect.acquireRelease(
    Effect.sync(() =>
      new pg.Pool({ connectionString: options.url, max: options.pool ?? 4, options: `-c search_path=${schema}`, types })
    ),
    (pool) => Effect.promise(() => pool.end())
  )
  // A pooled connection that fails while idle must not crash the process: the next query reports it.
  pool.on("error", () => {})
  yield* Effect.tryPromise({
    try: async () => {
      await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
      await migrate(drizzle(pool), { migrationsFolder, migrationsSchema: schema, migrationsTable: "__drizzle_migrations" })
    },
    catch: fail("migrate")
  })

  const transaction = <A>(operation: string, body: (client: pg.PoolClient) => Promise<A>) =>
    Effect.tryPromise({
      try: async () => {
        const client = await pool.connect()
        try {
          await client.query("BEGIN")
          const result = await body(client)
          await client.query("COMMIT")
          return result
        } catch (error) {
          await client.query("ROLLBACK").catch(() => {})
          throw error
        } finally {
          client.release()
        }
      },
      catch: fail(operation)
    })

  /**
   * Applies `records` (in log order) and saves `checkpoint` for `consumer` in one transaction.
   * Records applied before (by offset) are skipped.
   */
  const project = (records: ReadonlyArray<ProjectableRecord>, checkpoint?: { readonly consumer: string; readonly checkpoint: LogRecord.Checkpoint }) =>
    transaction("project", async (client): Promise<ApplyStats> => {
      const plan = emptyPlan()
      for (const record of records) planDecoded(plan, record, DomainEvent.decode(record))
      const offsets = records.map((record) => record.offset)
      const inserted = await client.query<{ offset: number }>({
        name: "ocs:applied",
        text: `INSERT INTO applied_records ("offset") SELECT * FROM unnest($1::bigint[]) ON CONFLICT DO NOTHING RETURNING "offset"`,
        values: [offsets]
      })
      const fresh = new Set(inserted.rows.map((row) => row.offset))
      // A record twice in one batch is applied at its first place only.
      const keep = records.map((record) => fresh.delete(record.offset))
      let events = 0
      let count = 0
      for (let r = 0; r < records.length; r++) if (keep[r]) {
        count++
        events += plan.events[r]!
      }
      const sent = await execute(client, plan, (r) => keep[r]!)
      if (checkpoint !== undefined) {
        const next = Checkpoints.parseSqlite(checkpoint.checkpoint)
        // The checkpoint table is the event log's (its PostgreSQL twin): written through drizzle,
        // as Checkpoints.save writes it in SQLite, never by raw SQL outside @ocs/event-log.
        const db = drizzle(client)
        const t = Tables.consumerCheckpoints
        const stored = await db.select({ checkpoint: t.checkpoint! }).from(t).where(eq(t.consumer!, checkpoint.consumer)).for("update")
        const current = stored[0] === undefined ? undefined : Checkpoints.parseSqlite(stored[0].checkpoint as string)
        if (next === undefined || current === undefined || next > current) {
          const now = Date.now()
          await db.insert(t).values({ consumer: checkpoint.consumer, checkpoint: checkpoint.checkpoint, updatedAt: now } as never)
            .onConflictDoUpdate({ target: t.consumer as never, set: { checkpoint: checkpoint.checkpoint, updatedAt: now } as never })
        }
      }
      return { records: count, events, statements: sent }
    })

  const checkpoint = (consumer: string) =>
    Effect.tryPromise({
      try: () => {
        const t = Tables.consumerCheckpoints
        return drizzle(pool).select({ checkpoint: t.checkpoint! }).from(t).where(eq(t.consumer!, consumer))
      },
      catch: fail("checkpoint")
    }).pipe(Effect.map((rows) => Option.fromNullishOr(rows[0]?.checkpoint as string | undefined)))

  /** Rows of a query (the read side, tests). */
  const query = <Row extends object>(text: string, values: ReadonlyArray<unknown> = []) =>
    Effect.tryPromise({ try: () => pool.query<Row>(text, [...values]), catch: fail("query") }).pipe(Effect.map((result) => result.rows))

  /**
   * The digest of the projected content, computed exactly as the SQLite file's
   * (../internal/digest.ts): per table, sha256 over its rows in key order (bytewise, as SQLite
   * orders text), content columns only.
   */
  const digest = Effect.tryPromise({
    try: async () => {
      const all = Crypto.createHash("sha256")
      const out: Record<string, { sha256: string; rows: number }> = {}
      for (const table of projectedTables) {
        const result = await pool.query({
          text: `SELECT ${[...table.key, ...table.content].map(quote).join(", ")} FROM ${table.name} ORDER BY ${table.key.map((k) => (typeOf(table.name, k) === "text" ? `${quote(k)} COLLATE "C"` : quote(k))).join(", ")}`,
          rowMode: "array"
        })
        const hash = Crypto.createHash("sha256")
        for (const row of result.rows) {
          hash.update(JSON.stringify(row))
          hash.update("\n")
        }
        const sha256 = hash.digest("hex")
        out[table.name] = { sha256, rows: result.rows.length }
        all.update(`${table.name} ${sha256} ${result.rows.length}\n`)
      }
      return { digest: all.digest("hex"), tables: out }
    },
    catch: fail("digest")
  })

  /**
   * Projects every record after the stored checkpoint present in the log now (a log whose
   * checkpoints are SQLite offsets), batch by batch, each with its checkpoint.
   */
  const catchUp = (consumer: string = DEFAULT_CONSUMER, batchSize = 2000) =>
    Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const stored = yield* checkpoint(consumer)
      const last = Option.isSome(stored) ? Checkpoints.parseSqlite(stored.value) : -1
      if (last === undefined) {
        return yield* new PostgresStoreError({ operation: "catchUp", message: `catchUp resumes SQLite checkpoints only; got ${Option.getOrThrow(stored)}` })
      }
      let records = 0
      yield* log.read({ tenant: "all", from: last + 1, pageSize: batchSize }).pipe(
        Stream.rechunk(batchSize),
        Stream.runForEachArray((page) => {
          records += page.length
          return project(page, { consumer, checkpoint: Checkpoints.sqlite(page[page.length - 1]!.offset) })
        })
      )
      return records
    })

  /** Follows the log from the stored checkpoint in a fiber of the current scope (any log, Kafka too). */
  const run = (consumer: string = DEFAULT_CONSUMER, options?: { readonly batchSize?: number; readonly maxBatchWaitMillis?: number }) =>
    Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const stored = yield* checkpoint(consumer)
      const batchSize = options?.batchSize ?? 2000
      return yield* log.subscribe(consumer, { tenant: "all", from: Option.getOrUndefined(stored), pageSize: batchSize }).pipe(
        Stream.groupedWithin(batchSize, Duration.millis(options?.maxBatchWaitMillis ?? 200)),
        Stream.runForEach((deliveries) =>
          project(deliveries.map((d) => d.record), { consumer, checkpoint: deliveries[deliveries.length - 1]!.checkpoint })
        ),
        Effect.forkScoped
      )
    })

  return { schema, pool, project, checkpoint, query, digest, catchUp, run }
})

/** The consumer name the SQLite read models use too. */
export const DEFAULT_CONSUMER = "read-models"

export type PostgresStore = Effect.Success<ReturnType<typeof make>>

export interface RebuildOptions extends Options {
  /** The log's records, in order (e.g. `EventLog.read`). */
  readonly records: Stream.Stream<LogRecord.LogRecord, unknown>
  /** Records per transaction. Default 2000. */
  readonly batchSize?: number | undefined
  /** The consumer whose checkpoint the rebuilt copy carries. Default `read-models`. */
  readonly consumer?: string | undefined
}

/**
 * Rebuilds the copy without downtime: projects `records` into a new schema (`<schema>_next`,
 * emptied first), then swaps it in under the schema's name in one transaction and drops the old
 * copy. Readers resolve tables through `search_path` by the schema's name, so a query before the
 * commit reads the old, complete copy and one after it the new, complete copy: none sees a
 * half-built one. A query still running on the old copy finishes there (the drop waits for it).
 */
export const rebuildAndSwap = Effect.fnUntraced(function*(options: RebuildOptions) {
  const schema = identifier(options.schema ?? DEFAULT_SCHEMA)
  const next = identifier(`${schema}_next`)
  const old = identifier(`${schema}_old`)
  const admin = new pg.Client({ connectionString: options.url })
  yield* Effect.acquireRelease(Effect.tryPromise({ try: () => admin.connect(), catch: fail("connect") }), () => Effect.promise(() => admin.end()))
  yield* Effect.tryPromise({ try: () => admin.query(`DROP SCHEMA IF EXISTS ${next} CASCADE`), catch: fail("rebuild") })
  const stats = yield* Effect.scoped(Effect.gen(function*() {
    const store = yield* make({ url: options.url, schema: next, pool: options.pool })
    const consumer = options.consumer ?? DEFAULT_CONSUMER
    let records = 0
    yield* options.records.pipe(
      Stream.rechunk(options.batchSize ?? 2000),
      Stream.runForEachArray((batch) => {
        const last = batch[batch.length - 1]!
        records += batch.length
        return store.project(batch, { consumer, checkpoint: Checkpoints.sqlite(last.offset) })
      }),
      Effect.mapError((error) => (error instanceof PostgresStoreError ? error : fail("rebuild")(error)))
    )
    return { records }
  }))
  const started = performance.now()
  yield* Effect.tryPromise({
    try: async () => {
      await admin.query("BEGIN")
      try {
        await admin.query(`DROP SCHEMA IF EXISTS ${old} CASCADE`)
        const current = await admin.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])
        if (current.rows.length > 0) await admin.query(`ALTER SCHEMA ${schema} RENAME TO ${old}`)
        await admin.query(`ALTER SCHEMA ${next} RENAME TO ${schema}`)
        await admin.query("COMMIT")
      } catch (error) {
        await admin.query("ROLLBACK").catch(() => {})
        throw error
      }
      await admin.query(`DROP SCHEMA IF EXISTS ${old} CASCADE`)
    },
    catch: fail("swap")
  })
  return { records: stats.records, swapMillis: performance.now() - started }
})
