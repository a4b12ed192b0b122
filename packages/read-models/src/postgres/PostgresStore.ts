/**
 * Read models in PostgreSQL (docs/architecture.md §4.34): the same projection as the SQLite
 * file (the registry's plans, ../internal/plan.ts), written into a PostgreSQL schema.
 *
 * - `project(records, checkpoint)`: one transaction per batch writes the rows, the records'
 *   offsets (`applied_records`: a record is applied once, whatever redelivers it) and the
 *   checkpoint, which never moves backwards. Runs of rows of one statement go as one statement
 *   (./Statements.ts); a run is cut where a key repeats, so the conflict rule sees every
 *   observation in log order, as in SQLite.
 * - `projectStream` (catchUp, `rebuildAndSwap`): batches of a stream, each with its checkpoint;
 *   the planner thread decodes ahead when nothing is compared.
 * - The schema is created and migrated (drizzle-kit's `drizzle-pg/`) when the store opens; the
 *   migrations' journal lives in the same schema, so each schema is a copy of its own.
 * - As in the SQLite file (../internal/projection.ts), in the same transaction: Kafka-mode copies
 *   of a fact applied at another position are dropped (`applied_dedupe_keys`), records of a
 *   business the tenant predicate refuses are remembered in `quarantined_records`, and change
 *   detection writes the changes it finds to `change_outbox` (./Changes.ts).
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
import * as Planner from "../internal/planner.ts"
import { projectedTables } from "../projections/index.ts"
import { quote } from "../projections/Projection.ts"
import type { Accepts } from "../internal/options.ts"
import * as Bulk from "./Bulk.ts"
import * as Changes from "./Changes.ts"
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
  /**
   * Change detection (the change outbox, docs/architecture.md §4.14) on the live path. Default
   * true; a rebuild replays the log's `changes` records instead.
   */
  readonly detectChanges?: boolean | undefined
  /**
   * The schema is a rebuild's, invisible to readers until `rebuildAndSwap` swaps it in: its
   * sessions commit without waiting for the WAL flush (`synchronous_commit = off`, this pool's
   * sessions only). Safe because nothing reads the schema before the swap, whose own commit is
   * synchronous and flushes the WAL written before it; a crash before it loses only a copy
   * that is rebuilt from the log anyway.
   */
  readonly rebuilding?: boolean | undefined
}

/** Kafka mode: how long a dedupe key is remembered against copies from other servers (24 h, as in SQLite). */
const DEDUPE_WINDOW_MILLIS = 24 * 3600 * 1000

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
  /** Records of businesses the predicate refused, remembered in `quarantined_records`. */
  readonly quarantined: number
  /** Changes found and written to the change outbox. */
  readonly changes: number
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
  const send = async (query: pg.QueryConfig) => {
    await client.query(query)
    sent++
  }
  const run = async (rows: ReadonlyArray<number>) => {
    let batch: { statement: Extract<PgStatement, { kind: "batch" }>; op: number; columns: Array<Array<Param>>; keys: Set<string>; rows: number } | undefined
    const flush = async () => {
      if (batch === undefined) return
      const current = batch
      batch = undefined
      await send({ name: `ocs:${current.statement.name}`, text: current.statement.sql, values: current.columns })
    }
    for (const k of rows) {
      const op = plan.ops[k]!
      const params = plan.params[k]!
      const statement = statements[op]!
      if (statement.kind === "single") {
        await flush()
        await send({ name: `ocs:${statement.name}`, text: statement.sql, values: params as Array<Param> })
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

/** The plans of consecutive chunks of records as one plan. */
const merged = (plans: ReadonlyArray<Plan>): Plan => {
  if (plans.length === 1) return plans[0]!
  const out = emptyPlan()
  for (const plan of plans) {
    const base = out.ops.length
    for (let k = 0; k < plan.ops.length; k++) {
      out.ops.push(plan.ops[k]!)
      out.params.push(plan.params[k]!)
    }
    for (let r = 0; r < plan.ends.length; r++) {
      out.ends.push(plan.ends[r]! + base)
      out.events.push(plan.events[r]!)
    }
  }
  return out
}

/** Batches planned ahead of the one being written (the planner thread's lead). */
const BATCHES_AHEAD = 2

/** Opens the store in the current scope: the pool, the schema, its migrations. */
export const make = Effect.fnUntraced(function*(options: Options) {
  const schema = identifier(options.schema ?? DEFAULT_SCHEMA)
  const pool = yield* Effect.acquireRelease(
    Effect.sync(() =>
      new pg.Pool({
        connectionString: options.url,
        max: options.pool ?? 4,
        options: `-c search_path=${schema}${options.rebuilding === true ? " -c synchronous_commit=off" : ""}`,
        types
      })
    ),
    (pool) => Effect.promise(() => pool.end())
  )
  // A pooled connection that fails while idle must not crash the process: the next query reports it.
  pool.on("error", () => {})
  yield* Effect.tryPromise({
    try: async () => {
      // Servers sharing one copy (Kafka mode) may start together: one migrates at a time.
      const client = await pool.connect()
      try {
        await client.query("SELECT pg_advisory_lock(hashtext($1))", [`ocs-migrate:${schema}`])
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
        await migrate(drizzle(client), { migrationsFolder, migrationsSchema: schema, migrationsTable: "__drizzle_migrations" })
      } finally {
        await client.query("SELECT pg_advisory_unlock(hashtext($1))", [`ocs-migrate:${schema}`]).catch(() => {})
        client.release()
      }
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

  const detect = options.detectChanges !== false
  let prunedAt = 0
  const analyze = Bulk.analyzer(pool)

  /**
   * Kafka mode (records read from a topic): drops the copies of a fact applied at another
   * position (../internal/redeliveries.ts), one statement for the batch: the first position
   * inserted for a key is the one kept, a record at its own position is kept again.
   */
  const dropCopies = async (client: pg.PoolClient, records: ReadonlyArray<ProjectableRecord & { readonly dedupeKey: string | null; readonly kafka?: unknown }>) => {
    const keyed = records.filter((record) => record.kafka !== undefined && record.dedupeKey !== null)
    if (keyed.length === 0) return records
    const result = await client.query<{ app_id: string; business_id: string; dedupe_key: string; offset: number }>({
      name: "ocs:dedupe",
      text: `WITH v AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[]) AS v(a, b, k, o, t)),
        ins AS (INSERT INTO applied_dedupe_keys (app_id, business_id, dedupe_key, "offset", received_at) SELECT * FROM v ON CONFLICT DO NOTHING)
        SELECT d.app_id, d.business_id, d.dedupe_key, d."offset" FROM applied_dedupe_keys d JOIN v ON d.app_id = v.a AND d.business_id = v.b AND d.dedupe_key = v.k`,
      values: [
        keyed.map((r) => r.appId), keyed.map((r) => r.businessId ?? ""), keyed.map((r) => r.dedupeKey),
        keyed.map((r) => r.offset), keyed.map((r) => r.receivedAt)
      ]
    })
    // The statement's reads see the table before its own insert: a key new to the table is
    // kept at its first position in the batch.
    const first = new Map(result.rows.map((row) => [`${row.app_id}\u0000${row.business_id}\u0000${row.dedupe_key}`, row.offset]))
    return records.filter((record) => {
      if (record.kafka === undefined || record.dedupeKey === null) return true
      const key = `${record.appId}\u0000${record.businessId ?? ""}\u0000${record.dedupeKey}`
      const offset = first.get(key)
      if (offset === undefined) {
        first.set(key, record.offset)
        return true
      }
      return offset === record.offset
    })
  }

  /**
   * Applies `records` (in log order) and saves `checkpoint` for `consumer` in one transaction.
   * Records applied before (by offset) are skipped; records of a business `accepts` refuses are
   * quarantined, not applied.
   */
  const project = (
    records: ReadonlyArray<LogRecord.LogRecord>,
    checkpoint?: { readonly consumer: string; readonly checkpoint: LogRecord.Checkpoint },
    options?: {
      readonly accepts?: Accepts | undefined
      /** The records' plans, made beforehand (the planner thread): used when every record is applied as given and nothing is compared. */
      readonly plans?: ReadonlyArray<Plan> | undefined
      /**
       * Checkpoints saved only if each is still what the caller resumed from (`expected`,
       * undefined: none stored): the fence of a shared copy (`runPartitions`). Any other value
       * means another process moved it, and the whole transaction fails (`CheckpointMoved`).
       */
      readonly fenced?: ReadonlyArray<{ readonly consumer: string; readonly expected: LogRecord.Checkpoint | undefined; readonly checkpoint: LogRecord.Checkpoint }> | undefined
      /** The records are released from quarantine (./Quarantine.ts): forgotten there in the same transaction. */
      readonly released?: boolean | undefined
    }
  ) =>
    transaction("project", async (client): Promise<ApplyStats> => {
      const now = Date.now()
      const fromTopic = records.length > 0 && records[0]!.kafka !== undefined
      const admitted = fromTopic ? await dropCopies(client, records) : records
      // A page's copy still counts for its own full pass (docs/architecture.md §4.14).
      if (detect && admitted.length < records.length) {
        const kept = new Set(admitted)
        await Changes.countCopies(client, records.filter((record) => !kept.has(record)))
      }
      if (fromTopic && now - prunedAt >= 60_000) {
        prunedAt = now
        await client.query({ name: "ocs:dedupe.prune", text: "DELETE FROM applied_dedupe_keys WHERE received_at < $1", values: [now - DEDUPE_WINDOW_MILLIS] })
      }
      const accepts = options?.accepts
      const accepted = accepts === undefined ? admitted : admitted.filter((r) => r.businessId === null || accepts(r.appId, r.businessId))
      const refused = accepts === undefined ? [] : admitted.filter((r) => r.businessId !== null && !accepts(r.appId, r.businessId))
      if (refused.length > 0) {
        await client.query({
          name: "ocs:quarantine",
          text: `INSERT INTO quarantined_records ("offset", app_id, business_id, type, received_at)
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[]) ON CONFLICT DO NOTHING`,
          values: [refused.map((r) => r.offset), refused.map((r) => r.appId), refused.map((r) => r.businessId), refused.map((r) => r.type), refused.map((r) => r.receivedAt)]
        })
      }
      const planned = options?.plans !== undefined && !detect && accepted === records
      const decoded = planned ? [] : accepted.map((record) => DomainEvent.decode(record))
      const plan = planned ? merged(options.plans!) : emptyPlan()
      if (!planned) for (let r = 0; r < accepted.length; r++) planDecoded(plan, accepted[r]!, decoded[r]!)
      const offsets = accepted.map((record) => record.offset)
      const inserted = await client.query<{ offset: number }>({
        name: "ocs:applied",
        text: `INSERT INTO applied_records ("offset") SELECT * FROM unnest($1::bigint[]) ON CONFLICT DO NOTHING RETURNING "offset"`,
        values: [offsets]
      })
      const fresh = new Set(inserted.rows.map((row) => row.offset))
      // A record twice in one batch is applied at its first place only.
      const keep = accepted.map((record) => fresh.delete(record.offset))
      let events = 0
      let count = 0
      for (let r = 0; r < accepted.length; r++) if (keep[r]) {
        count++
        events += plan.events[r]!
      }
      let sent: number
      let changes = 0
      if (detect) {
        const result = await Changes.applyDetecting(client, accepted, decoded, plan, keep, -1, (only) => execute(client, plan, only))
        sent = result.statements
        changes = result.changes
      } else sent = await execute(client, plan, (r) => keep[r]!)
      if (options?.released === true) {
        await client.query({ name: "ocs:quarantine.release", text: `DELETE FROM quarantined_records WHERE "offset" = ANY($1::bigint[])`, values: [offsets] })
      }
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
      if (options?.fenced !== undefined && options.fenced.length > 0) {
        const db = drizzle(client)
        const t = Tables.consumerCheckpoints
        // Locked in one order, so two processes never wait on each other's rows.
        for (const fence of [...options.fenced].sort((a, b) => (a.consumer < b.consumer ? -1 : a.consumer > b.consumer ? 1 : 0))) {
          const stored = await db.select({ checkpoint: t.checkpoint! }).from(t).where(eq(t.consumer!, fence.consumer)).for("update")
          const current = stored[0]?.checkpoint as string | undefined
          if (current !== fence.expected) throw new CheckpointMovedError(fence.consumer)
          const now = Date.now()
          await db.insert(t).values({ consumer: fence.consumer, checkpoint: fence.checkpoint, updatedAt: now } as never)
            .onConflictDoUpdate({ target: t.consumer as never, set: { checkpoint: fence.checkpoint, updatedAt: now } as never })
        }
      }
      return { records: count, events, statements: sent, quarantined: refused.length, changes }
    }).pipe(Effect.tap((stats) => Effect.tryPromise({ try: () => analyze(stats.records), catch: fail("analyze") })))

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
   * orders text), content columns only; of one tenant, or of everything.
   */
  const digestOf = (tenant?: { readonly appId: string; readonly businessId: string }) => Effect.tryPromise({
    try: async () => {
      const all = Crypto.createHash("sha256")
      const out: Record<string, { sha256: string; rows: number }> = {}
      for (const table of projectedTables) {
        const result = await pool.query({
          values: tenant === undefined ? [] : [tenant.appId, tenant.businessId],
          text: `SELECT ${[...table.key, ...table.content].map(quote).join(", ")} FROM ${table.name}${tenant === undefined ? "" : " WHERE app_id = $1 AND business_id = $2"} ORDER BY ${table.key.map((k) => (typeOf(table.name, k) === "text" ? `${quote(k)} COLLATE "C"` : quote(k))).join(", ")}`,
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
  const digest = digestOf()

  /**
   * Projects a stream of records in log order, `batchSize` per transaction, each batch with its
   * checkpoint (SQLite offsets): the rebuild's path. Without change detection a planner thread
   * decodes and plans the next batches while this one writes the oldest (../internal/planner.ts),
   * so decoding overlaps the database's work.
   */
  const projectStream = <E, R>(records: Stream.Stream<LogRecord.LogRecord, E, R>, consumer: string = DEFAULT_CONSUMER, batchSize = 2000) =>
    Effect.scoped(Effect.gen(function*() {
      let count = 0
      const checkpointOf = (batch: ReadonlyArray<LogRecord.LogRecord>) => ({ consumer, checkpoint: Checkpoints.sqlite(batch[batch.length - 1]!.offset) })
      if (detect) {
        yield* records.pipe(
          Stream.rechunk(batchSize),
          Stream.runForEachArray((batch) => Effect.map(project(batch, checkpointOf(batch)), () => void (count += batch.length)))
        )
        return count
      }
      const pipeline = yield* Planner.make<LogRecord.LogRecord>(`postgres:${schema}`)
      const writeUntil = (left: number) =>
        Effect.whileLoop({
          while: () => pipeline.size() > left,
          body: () =>
            Effect.flatMap(
              Effect.tryPromise({ try: () => pipeline.take(), catch: fail("plan") }),
              ({ plans, records: batch }) => Effect.as(project(batch, checkpointOf(batch), { plans }), batch.length)
            ),
          step: (n) => void (count += n)
        })
      yield* records.pipe(
        Stream.rechunk(batchSize),
        Stream.runForEachArray((batch) => {
          pipeline.add(batch)
          return writeUntil(BATCHES_AHEAD)
        }),
        Effect.andThen(Effect.suspend(() => writeUntil(0)))
      )
      return count
    }))

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
      return yield* projectStream(log.read({ tenant: "all", from: last + 1, pageSize: batchSize }), consumer, batchSize)
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

  /**
   * Kafka mode, several processes sharing one copy: follows `partitions` of the topic only, each
   * partition's checkpoint kept in its own row (`<consumer>@<partition>`, a Kafka checkpoint of
   * that partition alone) and saved in the transaction of the rows, fenced: a batch commits only
   * if every checkpoint it moves is still the one this run resumed from or last wrote. A process
   * that lost a partition and still had a batch in flight therefore either committed before the
   * new owner read the checkpoint, or fails (`CheckpointMoved`) and writes nothing; the new owner
   * resumes exactly after the last committed batch. Runs in a fiber of the current scope.
   */
  const runPartitions = (consumer: string, partitions: ReadonlyArray<number>, options?: { readonly batchSize?: number; readonly maxBatchWaitMillis?: number }) =>
    Effect.gen(function*() {
      const log = yield* EventLog.EventLog
      const expected = new Map<number, LogRecord.Checkpoint | undefined>()
      const next = new Map<number, string>()
      const seen = new Map<number, ReadonlyMap<string, number>>()
      for (const partition of partitions) {
        const stored = Option.getOrUndefined(yield* checkpoint(partitionConsumer(consumer, partition)))
        expected.set(partition, stored)
        if (stored === undefined) continue
        const state = Checkpoints.parseKafkaState(stored)
        if (state === undefined) return yield* new PostgresStoreError({ operation: "runPartitions", message: `not a Kafka checkpoint: ${stored}` })
        const at = state.next.get(partition)
        if (at !== undefined) next.set(partition, at)
        const marks = state.seen.get(partition)
        if (marks !== undefined) seen.set(partition, marks)
      }
      const from = next.size === 0 && seen.size === 0 ? undefined : Checkpoints.kafkaWithSeen(next, seen)
      const batchSize = options?.batchSize ?? 2000
      return yield* log.subscribe(consumer, { tenant: "all", from, partitions, pageSize: batchSize }).pipe(
        Stream.groupedWithin(batchSize, Duration.millis(options?.maxBatchWaitMillis ?? 200)),
        Stream.runForEach((deliveries) => {
          const last = Checkpoints.parseKafkaState(deliveries[deliveries.length - 1]!.checkpoint)!
          const moved = new Set(deliveries.map((d) => d.record.kafka!.partition))
          const fenced = [...moved].map((partition) => ({
            consumer: partitionConsumer(consumer, partition),
            expected: expected.get(partition),
            checkpoint: Checkpoints.kafkaWithSeen(
              new Map([[partition, last.next.get(partition)!]]),
              new Map([[partition, last.seen.get(partition) ?? new Map()]])
            )
          }))
          return Effect.map(project(deliveries.map((d) => d.record), undefined, { fenced }), (stats) => {
            for (const fence of fenced) expected.set(Number(fence.consumer.slice(consumer.length + 1)), fence.checkpoint)
            return stats
          })
        }),
        Effect.forkScoped
      )
    })

  /** The change outbox in order: each row's changes (`EngineRecord.changesBody`) and the record that revealed them. */
  const changes = query<{ seq: number; app_id: string; business_id: string; source_offset: number; body: string }>(
    "SELECT seq, app_id, business_id, source_offset, body FROM change_outbox ORDER BY seq"
  )

  return { schema, pool, project, projectStream, checkpoint, query, digest, digestOf, catchUp, run, runPartitions, changes }
})

/** The row of one partition's checkpoint of a shared copy (`runPartitions`). */
export const partitionConsumer = (consumer: string, partition: number): string => `${consumer}@${partition}`

/** Thrown inside a fenced transaction when a checkpoint is not the one the batch started from. */
class CheckpointMovedError extends Error {
  constructor(consumer: string) {
    super(`CheckpointMoved: the checkpoint ${consumer} was moved by another process (the partition changed hands); nothing of this batch was written`)
  }
}

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
 *
 * One statement resolves its tables one at a time, so a rename alone could land between two of
 * them: a statement joining `products` and `consumer_checkpoints` was seen reading the first from
 * the old copy and the second from the new (1 run in 5 of the rebuild test). The swap therefore
 * first takes every table of the old copy in ACCESS EXCLUSIVE mode: a statement that already
 * holds one of them finishes on the old copy first, and one that waits for one resolves its
 * names again after the commit, all in the new copy. The locks are taken with a short
 * `lock_timeout` and the transaction is tried again when it runs out, so a swap waiting for a
 * reader that waits for it gives way instead of deadlocking (readers never fail).
 */
export const rebuildAndSwap = Effect.fnUntraced(function*(options: RebuildOptions) {
  const schema = identifier(options.schema ?? DEFAULT_SCHEMA)
  const next = identifier(`${schema}_next`)
  const old = identifier(`${schema}_old`)
  const admin = new pg.Client({ connectionString: options.url })
  yield* Effect.acquireRelease(Effect.tryPromise({ try: () => admin.connect(), catch: fail("connect") }), () => Effect.promise(() => admin.end()))
  yield* Effect.tryPromise({ try: () => admin.query(`DROP SCHEMA IF EXISTS ${next} CASCADE`), catch: fail("rebuild") })
  const stats = yield* Effect.scoped(Effect.gen(function*() {
    const store = yield* make({ url: options.url, schema: next, pool: options.pool, detectChanges: false, rebuilding: true })
    // Load first, index after (./Bulk.ts): the keys stay, the secondary indexes are built once.
    const indexes = yield* Effect.tryPromise({ try: () => Bulk.dropSecondaryIndexes(store.pool, next), catch: fail("rebuild") })
    const records = yield* store.projectStream(options.records, options.consumer ?? DEFAULT_CONSUMER, options.batchSize ?? 2000).pipe(
      Effect.mapError((error) => (error instanceof PostgresStoreError ? error : fail("rebuild")(error)))
    )
    yield* Effect.tryPromise({ try: () => Bulk.createIndexes(admin, next, indexes), catch: fail("rebuild") })
    return { records }
  }))
  const started = performance.now()
  yield* Effect.tryPromise({
    try: async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${old} CASCADE`)
      for (let attempt = 1; ; attempt++) {
        await admin.query("BEGIN")
        try {
          await admin.query("SET LOCAL lock_timeout = '100ms'")
          const tables = await admin.query<{ name: string }>(
            "SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY 1",
            [schema]
          )
          if (tables.rows.length > 0) {
            await admin.query(`LOCK TABLE ${tables.rows.map((t) => `${schema}.${identifier(t.name)}`).join(", ")} IN ACCESS EXCLUSIVE MODE`)
          }
          const current = await admin.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])
          if (current.rows.length > 0) await admin.query(`ALTER SCHEMA ${schema} RENAME TO ${old}`)
          await admin.query(`ALTER SCHEMA ${next} RENAME TO ${schema}`)
          await admin.query("COMMIT")
          break
        } catch (error) {
          await admin.query("ROLLBACK").catch(() => {})
          // 55P03 lock_not_available: the lock wait ran out; try again (for up to about 30 s).
          if ((error as { code?: string }).code !== "55P03" || attempt >= 300) throw error
        }
      }
      await admin.query(`DROP SCHEMA IF EXISTS ${old} CASCADE`)
    },
    catch: fail("swap")
  })
  return { records: stats.records, swapMillis: performance.now() - started }
})
