/**
 * ReadModels: products, stock, orders, bills, customers, depots, categories, brands, payments
 * and documents projected from the event log into one SQLite file (docs/architecture.md §3).
 *
 * - `project(records)`: decodes a batch of log records (`DomainEvent.decode`) and writes the
 *   rows and the consumer's checkpoint in ONE transaction, so a crash just replays the batch.
 * - `run` follows the log from the stored checkpoint, in batches; `catchUp` projects what the
 *   log holds now and returns; `rebuild` projects the log from scratch into a new file.
 * - A tenant predicate (`accepts`) quarantines the records of businesses not accepted yet: the
 *   checkpoint moves past them, `quarantine` lists them, `release` projects them later.
 * - The read API: every query names its tenant.
 */
import { Checkpoints, EventLog, type LogRecord, TraceContext } from "@ocs/event-log"
import { DomainEvent } from "@ocs/protocol"
import { SqliteDatabase } from "@ocs/sqlite"
import type Database from "better-sqlite3"
import { Clock, Context, Duration, Effect, type Fiber, Layer, Option, type Scope, Stream } from "effect"
import * as NodeFs from "node:fs"
import * as NodeUrl from "node:url"
import * as Digest from "./internal/digest.ts"
import type * as Plan from "./internal/plan.ts"
import * as Planner from "./internal/planner.ts"
import * as Projector from "./internal/projector.ts"
import * as Quarantine from "./internal/quarantine.ts"
import * as Redeliveries from "./internal/redeliveries.ts"
import * as Queries from "./internal/queries.ts"
import * as Statements from "./internal/statements.ts"
import { RebuildTargetExists, type ReadModelsError, type SqliteError, UnsupportedCheckpoint } from "./ReadModelsError.ts"
import type * as V from "./Views.ts"

/** The drizzle-kit migrations folder of read-model files (run at open). */
export const migrationsFolder = NodeUrl.fileURLToPath(new URL("../drizzle", import.meta.url))

export const DEFAULT_CONSUMER = "read-models"

/** Kafka mode: how long a dedupe key is remembered against copies from other servers (24 h, the log's default window). */
const DEDUPE_WINDOW_MILLIS = 24 * 3600 * 1000

/** The tables projected from the log, as `digest` covers them (sync state and bookkeeping are not). */
export const projectedTables: ReadonlyArray<string> = Statements.projectedTables.map((t) => t.name)

export interface Options {
  readonly filename: string
  /** Name the checkpoint is saved under. Default "read-models". */
  readonly consumer?: string | undefined
  /**
   * Default "NORMAL": the log is the durable source and the checkpoint commits with the rows,
   * so losing the last commits on power loss only means replaying them.
   */
  readonly synchronous?: "NORMAL" | "FULL" | undefined
  /** Records per transaction for `run`, `catchUp` and `rebuild`. Default 2000. */
  readonly batchSize?: number | undefined
  /** `run` commits a partial batch after this long. Default 200 ms. */
  readonly maxBatchWaitMillis?: number | undefined
  readonly busyTimeoutMillis?: number | undefined
  /** SQLite page cache of the connection in KiB. Default 65536 (64 MiB). */
  readonly cacheSizeKiB?: number | undefined
  /**
   * Compare what pulls see with the copy and relay the changes found to the log (default true;
   * docs/architecture.md §4.14). `rebuild` never does: the changes are in the log already.
   */
  readonly detectChanges?: boolean | undefined
}

export interface RebuildOptions {
  /** The new file; it must not exist (written beside it as `<filename>.rebuilding`, then renamed). */
  readonly filename: string
  /** Only this tenant's records (application-level records of the app are not included). */
  readonly tenant?: V.Tenant | undefined
  /** Point in time: records up to this offset (inclusive). */
  readonly untilOffset?: number | undefined
  /** Point in time: records received at or before this instant (ms epoch). */
  readonly untilReceivedAt?: number | undefined
  readonly consumer?: string | undefined
  /** Records per transaction. Default 5000. */
  readonly batchSize?: number | undefined
  /** Default 262144 (256 MiB). */
  readonly cacheSizeKiB?: number | undefined
}

/**
 * Whether records of this business are applied now. Called once per record whose businessId is
 * not null (application-level records such as webhooksEnabled are always applied), inside the
 * batch's transaction: keep it synchronous and cheap (an in-memory set).
 */
export type Accepts = (appId: string, businessId: string) => boolean

export interface FollowOptions {
  /**
   * Records of businesses it refuses are not applied but quarantined: remembered by offset in
   * the file (`quarantine` lists them) while the checkpoint moves past them, so the projection
   * never stalls; `release` projects them once the business is accepted. Default: accept all.
   */
  readonly accepts?: Accepts | undefined
  /**
   * Whose changes this process relays to the log (docs/architecture.md §4.14). With several
   * servers over one log every projection finds the same changes; only the tenant's owner (the
   * server that pulls it) appends them, the others forget theirs. Default: every tenant.
   */
  readonly relays?: Accepts | undefined
  /**
   * `run` only: told of every batch the subscription delivers (all its records, quarantined
   * ones included) before the batch is projected, so a host can follow the log on the
   * projection's subscription instead of opening another one (over Kafka each subscription is
   * a consumer that fetches and decodes every record; docs/architecture.md §4.19). A batch
   * projected and then delivered again after a restart is told again. A failure stops `run`.
   */
  readonly onBatch?: ((records: ReadonlyArray<LogRecord.LogRecord>) => Effect.Effect<void>) | undefined
}

export interface ProjectOptions extends FollowOptions {
  readonly consumer?: string | undefined
  /** Default: `sqlite:<highest offset in the batch>`. */
  readonly checkpoint?: LogRecord.Checkpoint | undefined
}

export interface ProjectStats {
  /** Records applied (quarantined records and records applied before are not counted). */
  readonly records: number
  /** Changes found by comparing with the copy, waiting in the change outbox for the log. */
  readonly changes?: number | undefined
  /** Records quarantined by the tenant predicate. */
  readonly quarantined: number
  readonly events: number
  /** Offset of the last record projected (undefined when there was none). */
  readonly lastOffset: number | undefined
  readonly millis: number
}

export interface ReadModelsService {
  readonly filename: string
  readonly project: (records: ReadonlyArray<LogRecord.LogRecord>, options?: ProjectOptions) => Effect.Effect<ProjectStats, SqliteError>
  readonly checkpoint: (consumer?: string) => Effect.Effect<Option.Option<LogRecord.Checkpoint>, SqliteError>
  /** Projects every record after the stored checkpoint present in the log now (SQLite log). */
  readonly catchUp: (consumer?: string, options?: FollowOptions) => Effect.Effect<ProjectStats, ReadModelsError, EventLog.EventLog>
  /** Follows the log from the stored checkpoint in a fiber of the current scope. */
  readonly run: (consumer?: string, options?: FollowOptions) => Effect.Effect<Fiber.Fiber<void, ReadModelsError>, SqliteError, EventLog.EventLog | Scope.Scope>
  /** Quarantined records: counts per business and the latest records. */
  readonly quarantine: (options?: V.QuarantineQuery) => Effect.Effect<V.Quarantine, SqliteError>
  /**
   * Projects the quarantined records of one business from the log (read back by offset), then
   * removes them from the quarantine, batch by batch in one transaction each. No checkpoint
   * moves. A record applied this late goes through the conflict rule like any other, so it never
   * replaces a newer observation already applied.
   */
  readonly release: (tenant: V.Tenant) => Effect.Effect<ProjectStats, ReadModelsError, EventLog.EventLog>
  readonly rebuild: (options: RebuildOptions) => Effect.Effect<ProjectStats, ReadModelsError, EventLog.EventLog>
  /**
   * Appends the changes waiting in the change outbox to the log, oldest first, as `changes`
   * records (dedupe key `changes:<record that revealed them>`, so a relay repeated after a
   * crash appends nothing twice), then forgets them. `run` does it after every batch.
   */
  readonly relayChanges: Effect.Effect<number, ReadModelsError, EventLog.EventLog>
  /**
   * Records up to `offset` (inclusive) are history for change detection: projected, never
   * compared (their changes are in the log already). For a file started empty over a log that
   * already holds records, e.g. after the old file was deleted: give it the log's last offset
   * before it projects anything. Kept in the file; it never moves back.
   */
  readonly historyUntil: (offset: number) => Effect.Effect<void, SqliteError>

  readonly products: (tenant: V.Tenant, options?: V.ProductQuery) => Effect.Effect<V.Page<V.Product>, SqliteError>
  readonly product: (tenant: V.Tenant, id: string) => Effect.Effect<Option.Option<V.Product>, SqliteError>
  /** Stock levels per product and depot, ordered by product then depot. */
  readonly inventory: (tenant: V.Tenant, options?: V.InventoryQuery) => Effect.Effect<ReadonlyArray<V.StockLevel>, SqliteError>
  readonly orders: (tenant: V.Tenant, options?: V.OrderQuery) => Effect.Effect<V.Page<V.Order>, SqliteError>
  /** The order (tombstones included) with its lines. */
  readonly order: (tenant: V.Tenant, id: string) => Effect.Effect<Option.Option<V.OrderDetail>, SqliteError>
  readonly bills: (tenant: V.Tenant, options?: V.BillQuery) => Effect.Effect<V.Page<V.Bill>, SqliteError>
  /** The bill (tombstones included) with its lines. */
  readonly bill: (tenant: V.Tenant, id: string) => Effect.Effect<Option.Option<V.BillDetail>, SqliteError>
  readonly customers: (tenant: V.Tenant, options?: V.CustomerQuery) => Effect.Effect<V.Page<V.Customer>, SqliteError>
  readonly customer: (tenant: V.Tenant, id: string) => Effect.Effect<Option.Option<V.Customer>, SqliteError>
  readonly depots: (tenant: V.Tenant) => Effect.Effect<ReadonlyArray<V.Depot>, SqliteError>
  readonly categories: (tenant: V.Tenant) => Effect.Effect<ReadonlyArray<V.Category>, SqliteError>
  readonly brands: (tenant: V.Tenant) => Effect.Effect<ReadonlyArray<V.Brand>, SqliteError>
  readonly payments: (tenant: V.Tenant, options?: V.PaymentQuery) => Effect.Effect<V.Page<V.Payment>, SqliteError>
  readonly documents: (tenant: V.Tenant, kind: string, options?: V.PageOptions) => Effect.Effect<V.Page<V.Document>, SqliteError>
  readonly document: (tenant: V.Tenant, kind: string, id: string) => Effect.Effect<Option.Option<V.Document>, SqliteError>
  /** The application's last webhooksEnabled (application-level: only `tenant.appId` is used). */
  readonly webhooks: (tenant: V.Tenant) => Effect.Effect<Option.Option<V.WebhooksEnabled>, SqliteError>
  readonly unknownEvents: (tenant: V.Tenant, options?: V.PageOptions) => Effect.Effect<V.Page<V.UnknownEvent>, SqliteError>
  readonly counts: (tenant: V.Tenant) => Effect.Effect<V.Counts, SqliteError>
  /** Rows per resource over every tenant (tombstones included): tenant-free, for metrics. */
  readonly rowCounts: Effect.Effect<Readonly<Record<string, number>>, SqliteError>
  /** Deterministic content digest of one tenant, or of everything with `"all"` (default). */
  readonly digest: (tenant?: V.Tenant | "all") => Effect.Effect<Digest.Digest, SqliteError>
}

export type { Digest } from "./internal/digest.ts"

/** Keeps an SQLite checkpoint from moving backwards when an older batch is redelivered. */
const saveCheckpoint = (handle: SqliteDatabase.Handle, consumer: string, checkpoint: LogRecord.Checkpoint, now: number) => {
  const next = Checkpoints.parseSqlite(checkpoint)
  if (next !== undefined) {
    const current = Checkpoints.load(handle.drizzle, consumer)
    const stored = Option.isSome(current) ? Checkpoints.parseSqlite(current.value) : undefined
    if (stored !== undefined && stored >= next) return
  }
  Checkpoints.save(handle.drizzle, consumer, checkpoint, now)
}

const lastOffsetOf = (records: ReadonlyArray<LogRecord.LogRecord>) => {
  let max: number | undefined
  for (const r of records) if (max === undefined || r.offset > max) max = r.offset
  return max
}

const newestReceivedAt = (records: ReadonlyArray<LogRecord.LogRecord>) => {
  let max: number | undefined
  for (const r of records) if (max === undefined || r.receivedAt > max) max = r.receivedAt
  return max
}

/** Opens (creating and migrating) a read-model file in the current scope. */
const open = Effect.fnUntraced(function*(options: {
  readonly filename: string
  readonly synchronous?: "NORMAL" | "FULL" | undefined
  readonly busyTimeoutMillis?: number | undefined
  readonly cacheSizeKiB: number
}) {
  const handle = yield* SqliteDatabase.make({
    filename: options.filename,
    migrationsFolder,
    synchronous: options.synchronous ?? "NORMAL",
    busyTimeoutMillis: options.busyTimeoutMillis
  })
  // Upserts land all over the tables' B-trees: a cache that holds them saves re-reading pages.
  yield* handle.use("pragma", (_, client) => client.pragma(`cache_size = -${Math.max(2048, Math.trunc(options.cacheSizeKiB))}`))
  return handle
})

/** The projection core of one open file: `project` plus its prepared statements. */
const projection = Effect.fnUntraced(function*(handle: SqliteDatabase.Handle, defaultConsumer: string, options?: Projector.Options & { readonly detectChanges?: boolean | undefined }) {
  // Records past `detect.after` go through change detection (-1: all; undefined: none). A file
  // started over a log that already held records treats those as history (`historyUntil`).
  const detect: { after: number | undefined } = { after: options?.detectChanges === false ? undefined : -1 }
  if (detect.after !== undefined) {
    const stored = yield* handle.use("historyUntil", (orm) => Checkpoints.load(orm, historyKey(defaultConsumer)))
    const until = Option.isSome(stored) ? Checkpoints.parseSqlite(stored.value) : undefined
    if (until !== undefined) detect.after = until
  }
  const projector = yield* handle.use("prepare", (_, client) => Projector.make(client, options))
  const quarantine = yield* handle.use("prepare", (_, client) => Quarantine.make(client))
  const redeliveries = yield* handle.use("prepare", (_, client) => Redeliveries.make(client, DEDUPE_WINDOW_MILLIS))
  /**
   * Splits a batch by the tenant predicate and remembers the refused records. Runs inside the
   * batch's transaction, so the predicate is asked at the moment the batch commits: a business
   * accepted before a `release` reads its quarantine has no record quarantined after it.
   */
  const admit = (records: ReadonlyArray<LogRecord.LogRecord>, accepts: Accepts | undefined) => {
    // Kafka mode only (records read from a topic): another copy of a fact already applied.
    if (records.length > 0 && records[0]!.kafka !== undefined) records = records.filter((record) => !redeliveries.repeated(record))
    if (accepts === undefined) return { accepted: records, quarantined: 0 }
    const accepted: Array<LogRecord.LogRecord> = []
    let quarantined = 0
    for (const record of records) {
      if (record.businessId === null || accepts(record.appId, record.businessId)) accepted.push(record)
      else {
        quarantine.add(record)
        quarantined++
      }
    }
    return { accepted, quarantined }
  }
  /** One transaction: the records (planned here, or `plans` made beforehand) and the checkpoint. */
  const write = (records: ReadonlyArray<LogRecord.LogRecord>, options: ProjectOptions | undefined, plans: ReadonlyArray<Plan.Plan> | undefined) =>
    Effect.gen(function*() {
      const started = performance.now()
      const consumer = options?.consumer ?? defaultConsumer
      const lastOffset = lastOffsetOf(records)
      const checkpoint = options?.checkpoint ?? (lastOffset === undefined ? undefined : Checkpoints.sqlite(lastOffset))
      const now = yield* Clock.currentTimeMillis
      const applied = yield* handle.transaction("project", () => {
        let stats: Projector.ApplyStats & { readonly quarantined: number }
        if (plans === undefined) {
          const { accepted, quarantined } = admit(records, options?.accepts)
          stats = { ...projector.apply(accepted, detect.after), quarantined }
        } else {
          // Rebuilds plan ahead on another thread and take no predicate.
          stats = { ...projector.execute(records, plans), quarantined: 0 }
        }
        if (checkpoint !== undefined) saveCheckpoint(handle, consumer, checkpoint, now)
        // A rebuild replays an old log: its dedupe window moves with the records' own time.
        redeliveries.prune(plans === undefined ? now : newestReceivedAt(records) ?? now)
        return stats
      })
      return { ...applied, lastOffset, millis: performance.now() - started }
    })
  /**
   * A batch's span starts its own trace and links to the appends of its records (their
   * `traceparent`, docs/architecture.md §4.17): the hop from append to projection is
   * asynchronous and one batch holds many traces. It is exported when a linked append was.
   */
  const project = (records: ReadonlyArray<LogRecord.LogRecord>, options?: ProjectOptions) => {
    const links = TraceContext.links(records)
    return write(records, options, undefined).pipe(
      Effect.withSpan("ReadModels.project", { root: true, links, sampled: links.length > 0, attributes: { "ocs.records": records.length } })
    )
  }
  const projectPlanned = (records: ReadonlyArray<LogRecord.LogRecord>, plans: ReadonlyArray<Plan.Plan>, options?: ProjectOptions) =>
    write(records, options, plans)
  /** Applies released records and forgets them, in one transaction; no checkpoint moves. */
  const applyReleased = (records: ReadonlyArray<LogRecord.LogRecord>) =>
    Effect.gen(function*() {
      const started = performance.now()
      const applied = yield* handle.transaction("release", () => {
        const stats = projector.apply(records, detect.after)
        for (const record of records) quarantine.remove(record.offset)
        return stats
      })
      return { ...applied, quarantined: 0, lastOffset: lastOffsetOf(records), millis: performance.now() - started }
    })
  /** Records up to `offset` are history: projected, never compared again (kept in the file). */
  const historyUntil = (offset: number) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      handle.transaction("historyUntil", () => {
        if (detect.after === undefined || offset <= detect.after) return
        Checkpoints.save(handle.drizzle, historyKey(defaultConsumer), Checkpoints.sqlite(offset), now)
        detect.after = offset
      }))
  /**
   * Kafka mode, for a rebuild (which plans records before its write transaction): the records
   * without the copies of a fact applied at another position, remembered in the file as a live
   * projection remembers them, so the rebuilt file keeps the same copy and goes on from there.
   */
  const dropCopies = (records: ReadonlyArray<LogRecord.LogRecord>) =>
    records.length === 0 || records[0]!.kafka === undefined
      ? Effect.succeed(records)
      : handle.transaction("dedupe", () => records.filter((record) => !redeliveries.repeated(record)))
  return { project, projectPlanned, quarantine, applyReleased, historyUntil, dropCopies }
})

/** Where a file keeps the offset up to which the log is history for change detection. */
const historyKey = (consumer: string) => `${consumer}:history-until`

const addStats = (a: ProjectStats, b: ProjectStats): ProjectStats => ({
  records: a.records + b.records,
  changes: (a.changes ?? 0) + (b.changes ?? 0),
  quarantined: a.quarantined + b.quarantined,
  events: a.events + b.events,
  lastOffset: b.lastOffset ?? a.lastOffset,
  millis: a.millis + b.millis
})

const emptyStats: ProjectStats = { records: 0, quarantined: 0, events: 0, lastOffset: undefined, millis: 0 }

/**
 * Drops the indexes declared in the schema (not the primary keys) and returns their DDL, for a
 * bulk load that recreates them at the end. Exported for the benchmark's baseline.
 */
export const dropSecondaryIndexes = (client: Database.Database): ReadonlyArray<string> => {
  const rows = client.prepare(
    "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"
  ).all() as ReadonlyArray<{ readonly name: string; readonly sql: string }>
  for (const row of rows) client.exec(`DROP INDEX "${row.name.replaceAll('"', '""')}"`)
  return rows.map((row) => row.sql)
}

/** Batches a rebuild reads and plans ahead of the one it writes (bounded memory: backpressure on the read). */
const BATCHES_AHEAD = 2

const planFailed = (filename: string, cause: unknown) =>
  cause instanceof SqliteDatabase.SqliteError
    ? cause
    : new SqliteDatabase.SqliteError({ filename, operation: "plan", message: `rebuild of ${filename}: planning failed: ${String(cause)}`, cause })

/** Projects the log from scratch into a new file (see `RebuildOptions`). */
export const rebuild = Effect.fn("ReadModels.rebuild")(function*(options: RebuildOptions): Effect.fn.Return<ProjectStats, ReadModelsError, EventLog.EventLog> {
  const log = yield* EventLog.EventLog
  const filename = options.filename
  if (NodeFs.existsSync(filename)) {
    return yield* new RebuildTargetExists({ filename, message: `rebuild refuses to overwrite ${filename}; remove it or choose another file` })
  }
  const work = `${filename}.rebuilding`
  const removeWork = () => {
    for (const f of [work, `${work}-wal`, `${work}-shm`]) NodeFs.rmSync(f, { force: true })
  }
  yield* Effect.sync(removeWork)
  const batchSize = options.batchSize ?? 5000
  const started = performance.now()
  const stats = yield* Effect.scoped(Effect.gen(function*() {
    // First, so that the thread loads while this one opens the file and reads the first batch.
    const pipeline = yield* Planner.make<LogRecord.LogRecord>(filename)
    const handle = yield* open({ filename: work, cacheSizeKiB: options.cacheSizeKiB ?? 262_144 })
    // A half-written rebuild is thrown away, so this file needs neither fsync nor a WAL until
    // it is complete: pages are written once, straight into the file (the rollback journal in
    // memory still undoes a failed batch).
    // Secondary indexes are built once at the end (sorted, far cheaper than row by row).
    const indexes = yield* handle.use("pragma", (_, client) => {
      client.pragma("journal_mode = MEMORY")
      client.pragma("synchronous = OFF")
      return dropSecondaryIndexes(client)
    })
    const { dropCopies, projectPlanned } = yield* projection(handle, options.consumer ?? DEFAULT_CONSUMER, { fresh: true, detectChanges: false })
    // Pipeline: the planner thread decodes the next batches while this thread writes the
    // oldest one (plans are pure, so planning ahead changes nothing).
    let total = emptyStats
    const writeUntil = (left: number) =>
      Effect.whileLoop({
        while: () => pipeline.size() > left,
        body: () =>
          Effect.flatMap(
            Effect.tryPromise({ try: () => pipeline.take(), catch: (cause) => planFailed(filename, cause) }),
            ({ plans, records }) => projectPlanned(records, plans)
          ),
        step: (s) => (total = addStats(total, s))
      })
    yield* log.read({
      tenant: options.tenant === undefined ? "all" : `${options.tenant.appId}:${options.tenant.businessId}`,
      untilOffset: options.untilOffset,
      untilReceivedAt: options.untilReceivedAt,
      pageSize: batchSize
    }).pipe(
      Stream.rechunk(batchSize),
      Stream.runForEachArray((page) =>
        Effect.flatMap(dropCopies(page), (records) => {
          if (records.length > 0) pipeline.add(records)
          return writeUntil(BATCHES_AHEAD)
        })),
      Effect.andThen(Effect.suspend(() => writeUntil(0)))
    )
    yield* handle.use("finish", (_, client) => {
      for (const ddl of indexes) client.exec(ddl)
      client.pragma("journal_mode = WAL")
      client.pragma("synchronous = FULL")
      client.pragma("wal_checkpoint(TRUNCATE)")
    })
    return total
  })).pipe(Effect.onError(() => Effect.sync(removeWork)))
  yield* Effect.try({
    try: () => NodeFs.renameSync(work, filename),
    catch: (cause) => new SqliteDatabase.SqliteError({ filename, operation: "rename", message: `rename ${work} to ${filename}: ${String(cause)}`, cause })
  })
  return { ...stats, millis: performance.now() - started }
})

export const make = Effect.fnUntraced(function*(options: Options): Effect.fn.Return<ReadModelsService, SqliteError, Scope.Scope> {
  const defaultConsumer = options.consumer ?? DEFAULT_CONSUMER
  const batchSize = options.batchSize ?? 2000
  const maxWait = Duration.millis(options.maxBatchWaitMillis ?? 200)
  const handle = yield* open({ ...options, cacheSizeKiB: options.cacheSizeKiB ?? 65_536 })
  const { applyReleased, historyUntil, project, quarantine } = yield* projection(handle, defaultConsumer, { detectChanges: options.detectChanges })
  const outbox = yield* handle.use("prepare", (_, client) => ({
    take: client.prepare<[number], { seq: number; app_id: string; business_id: string; source_record_id: string; source_offset: number; body: string; trace: string | null }>(
      "SELECT seq, app_id, business_id, source_record_id, source_offset, body, trace FROM change_outbox ORDER BY seq LIMIT ?"
    ),
    drop: client.prepare("DELETE FROM change_outbox WHERE seq <= ?")
  }))

  const relay = (relays: Accepts | undefined) => Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    let relayed = 0
    for (;;) {
      const taken = yield* handle.use("changeOutbox", () => outbox.take.all(500))
      if (taken.length === 0) return relayed
      const rows = relays === undefined ? taken : taken.filter((r) => relays(r.app_id, r.business_id))
      if (rows.length > 0) yield* log.append(rows.map((r) => ({
        appId: r.app_id,
        businessId: r.business_id,
        source: "sync" as const,
        type: DomainEvent.CHANGES_TYPE,
        body: r.body,
        dedupeKey: `changes:${r.source_record_id}`,
        meta: {
          revealedBy: { recordId: r.source_record_id, offset: r.source_offset },
          // The revealing append's trace: a plugin's handling links to it (docs/architecture.md §4.17).
          ...(r.trace === null ? {} : { [TraceContext.metaKey]: r.trace })
        }
      })))
      // Forgotten only once durable in the log; a crash before this appends them again, and
      // the log drops them by their dedupe key.
      yield* handle.transaction("changeOutbox", () => outbox.drop.run(taken[taken.length - 1]!.seq))
      relayed += rows.length
    }
  }).pipe(Effect.withSpan("ReadModels.relayChanges"))
  const relayChanges = relay(undefined)
  const q = Queries.make(handle.drizzle)
  const query = <A>(name: string, f: () => A) => handle.use(name, f)

  const checkpoint = (consumer = defaultConsumer) => handle.use("checkpoint", (orm) => Checkpoints.load(orm, consumer))

  const catchUp = Effect.fn("ReadModels.catchUp")(function*(consumer = defaultConsumer, options?: FollowOptions) {
    const log = yield* EventLog.EventLog
    const stored = yield* checkpoint(consumer)
    let from = 0
    if (Option.isSome(stored)) {
      const last = Checkpoints.parseSqlite(stored.value)
      if (last === undefined) {
        return yield* new UnsupportedCheckpoint({ consumer, checkpoint: stored.value, message: `catchUp resumes SQLite checkpoints only; got ${stored.value}` })
      }
      from = last + 1
    }
    let total = emptyStats
    yield* log.read({ tenant: "all", from, pageSize: batchSize }).pipe(
      Stream.rechunk(batchSize),
      Stream.runForEachArray((page) => Effect.map(project(page, { consumer, accepts: options?.accepts }), (s) => (total = addStats(total, s))))
    )
    yield* relay(options?.relays)
    return total
  })

  const run = Effect.fn("ReadModels.run")(function*(consumer = defaultConsumer, options?: FollowOptions) {
    const log = yield* EventLog.EventLog
    const stored = yield* checkpoint(consumer)
    // Changes a crash left in the outbox go first.
    yield* relay(options?.relays).pipe(Effect.catch((e) => Effect.logWarning(`change relay: ${e.message}`)))
    return yield* log.subscribe(consumer, { tenant: "all", from: Option.getOrUndefined(stored), pageSize: batchSize }).pipe(
      Stream.groupedWithin(batchSize, maxWait),
      Stream.runForEach((deliveries) => {
        const records = deliveries.map((d) => d.record)
        const projected = project(records, { consumer, checkpoint: deliveries[deliveries.length - 1]!.checkpoint, accepts: options?.accepts }).pipe(
          Effect.flatMap((stats) => (stats.changes ?? 0) > 0 ? relay(options?.relays) : Effect.void)
        )
        return options?.onBatch === undefined ? projected : Effect.andThen(options.onBatch(records), projected)
      }),
      Effect.forkScoped
    )
  })

  const release = Effect.fn("ReadModels.release")(function*(tenant: V.Tenant) {
    const log = yield* EventLog.EventLog
    const offsets = yield* handle.use("quarantined", () => quarantine.offsets(tenant))
    if (offsets.length === 0) return emptyStats
    const wanted = new Set(offsets)
    let total = emptyStats
    // One read over the span of the tenant's quarantined offsets (its own records only), keeping
    // the quarantined ones; in log order, so released records apply in the order they came.
    yield* log.read({ tenant: `${tenant.appId}:${tenant.businessId}`, from: offsets[0], untilOffset: offsets[offsets.length - 1], pageSize: batchSize }).pipe(
      Stream.filter((record) => wanted.has(record.offset)),
      Stream.rechunk(batchSize),
      Stream.runForEachArray((page) => Effect.map(applyReleased(page), (s) => (total = addStats(total, s))))
    )
    return total
  })

  return {
    filename: options.filename,
    project,
    checkpoint,
    catchUp,
    run,
    quarantine: (o) => query("quarantine", () => quarantine.list(o)),
    release,
    rebuild,
    relayChanges,
    historyUntil,
    products: (tenant, o) => query("products", () => q.products(tenant, o)),
    product: (tenant, id) => query("product", () => Option.fromUndefinedOr(q.product(tenant, id))),
    inventory: (tenant, o) => query("inventory", () => q.inventory(tenant, o)),
    orders: (tenant, o) => query("orders", () => q.orders(tenant, o)),
    order: (tenant, id) => query("order", () => Option.fromUndefinedOr(q.order(tenant, id))),
    bills: (tenant, o) => query("bills", () => q.bills(tenant, o)),
    bill: (tenant, id) => query("bill", () => Option.fromUndefinedOr(q.bill(tenant, id))),
    customers: (tenant, o) => query("customers", () => q.customers(tenant, o)),
    customer: (tenant, id) => query("customer", () => Option.fromUndefinedOr(q.customer(tenant, id))),
    depots: (tenant) => query("depots", () => q.depots(tenant)),
    categories: (tenant) => query("categories", () => q.categories(tenant)),
    brands: (tenant) => query("brands", () => q.brands(tenant)),
    payments: (tenant, o) => query("payments", () => q.payments(tenant, o)),
    documents: (tenant, kind, o) => query("documents", () => q.documents(tenant, kind, o)),
    document: (tenant, kind, id) => query("document", () => Option.fromUndefinedOr(q.document(tenant, kind, id))),
    webhooks: (tenant) => query("webhooks", () => Option.fromUndefinedOr(q.webhooks(tenant))),
    unknownEvents: (tenant, o) => query("unknownEvents", () => q.unknownEvents(tenant, o)),
    counts: (tenant) => query("counts", () => q.counts(tenant)),
    rowCounts: query("rowCounts", () => q.rowCounts()),
    digest: (tenant = "all") => query("digest", () => Digest.compute(handle.client, tenant === "all" ? undefined : tenant))
  }
})

export class ReadModels extends Context.Service<ReadModels, ReadModelsService>()("@ocs/read-models/ReadModels") {
  static readonly layer = (options: Options): Layer.Layer<ReadModels, SqliteError> => Layer.effect(ReadModels, make(options))
}
