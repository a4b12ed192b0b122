/**
 * The commands of `ocs-replay` (`./ocs replay <command>`), built with `effect/cli`.
 *
 * Every handler maps its failures to `ReplayError`s (exit 2 for usage and input errors, 1 when
 * `verify` finds differences, 3 for anything else); syntax errors in flags are reported by the
 * parser with exit 2.
 */
import type { LogRecord } from "@ocs/event-log"
import * as Json from "@ocs/protocol/Json"
import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Audit from "./Audit.ts"
import * as Commands from "./Commands.ts"
import * as Export from "./Export.ts"
import * as FieldDiff from "./FieldDiff.ts"
import type * as LogIntegrity from "./LogIntegrity.ts"
import { LogSource, optionsFromFlags } from "./LogSource.ts"
import * as Options from "./Options.ts"
import * as Output from "./Output.ts"
import * as Replay from "./Replay.ts"
import { DifferencesFound, toReplayError, UsageError } from "./ReplayError.ts"
import * as Stats from "./Stats.ts"
import * as Verify from "./Verify.ts"

type SourceFlags = {
  readonly log: Option.Option<string>
  readonly kafkaBrokers: Option.Option<string>
  readonly topic: Option.Option<string>
}

/** Runs `effect` with the log named by the flags; any failure becomes a `ReplayError`. */
const withSource = <A, E, R>(flags: SourceFlags, effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const options = yield* Effect.fromResult(optionsFromFlags(flags, Options.defaultLogFile()))
    return yield* Effect.provide(effect, LogSource.layer(options))
  }).pipe(Effect.mapError(toReplayError))

const opt = <A>(o: Option.Option<A>): A | undefined => Option.getOrUndefined(o)

const progress = Flag.Literals("progress", ["auto", "bar", "plain", "none"]).pipe(
  Flag.withDescription("Progress on stderr: a bar on a terminal, plain lines otherwise (auto), or none"),
  Flag.withDefault("auto")
)

const summaryFormat = Flag.Literals("format", ["table", "json"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("table"))

// ---------------------------------------------------------------------------------------------

const replaySummary = (s: Replay.Summary): string =>
  [
    `replayed ${s.records} records (${s.events} events) from ${s.source} into ${s.out} in ${s.seconds.toFixed(2)} s` +
    ` (${Math.round(s.recordsPerSecond)} records/s, ${Math.round(s.eventsPerSecond)} events/s)`,
    `tenant ${s.tenant}; until offset ${s.untilOffset ?? "-"}; until ${s.until ?? "-"}; last offset ${s.lastOffset ?? "-"}`,
    "",
    Output.table(["table", "rows"], Object.entries(s.tables).map(([t, n]) => [t, n]))
  ].join("\n")

const replay = Command.make("replay", {
  ...Options.source,
  out: Flag.String("out").pipe(Flag.withMetavar("path"), Flag.withDescription("The new read-model SQLite file (must not exist)")),
  tenant: Options.tenant,
  until: Options.instant("until", "Point in time: records received at or before this instant"),
  untilOffset: Options.untilOffset,
  batchSize: Flag.Int("batch-size").pipe(Flag.withDescription("Records per transaction"), Flag.withDefault(5000)),
  format: summaryFormat,
  progress
}, (f) =>
  withSource(f, Effect.gen(function*() {
    const summary = yield* Replay.run({
      out: f.out,
      tenant: opt(f.tenant),
      untilOffset: opt(f.untilOffset),
      untilMs: opt(f.until),
      progress: f.progress,
      batchSize: f.batchSize
    })
    yield* Console.log(f.format === "json" ? JSON.stringify(summary) : replaySummary(summary))
  }))).pipe(
    Command.withDescription("Rebuild the read models from the log into a new SQLite file (all tenants or one, up to an offset or an instant)"),
    Command.withExamples([
      { command: "ocs-replay replay --log .ocs-data/demo/events.sqlite --out /tmp/rm.sqlite", description: "Rebuild everything" },
      { command: "ocs-replay replay --out /tmp/rm-42.sqlite --tenant 1001:42 --until 2024-05-01T00:00:00Z", description: "One tenant as it was at an instant" },
      { command: "ocs-replay replay --kafka-brokers 127.0.0.1:9092 --topic ocs-events --out /tmp/rm.sqlite", description: "From a Kafka topic" }
    ])
  )

// ---------------------------------------------------------------------------------------------

const short = (v: unknown) => Output.cell(typeof v === "string" ? v : v === null || v === undefined ? "null" : String(v), 40)

/** A difference in words; `sides` names the two files (the log's rebuild and the live file, say). */
const differenceText = (d: Verify.Difference, sides: { readonly a: string; readonly b: string } = { a: "log", b: "live" }): string => {
  switch (d.kind) {
    case "missing":
      return sides.a === "log" ? "in the log, missing from the live file" : `in ${sides.a}, missing from ${sides.b}`
    case "extra":
      return sides.a === "log" ? "in the live file, not in the log" : `in ${sides.b}, not in ${sides.a}`
    case "changed":
      return (d.columns ?? []).map((c) =>
        c.fields !== undefined && c.fields.length > 0
          ? `${c.column}: ${c.fields.slice(0, 5).map(FieldDiff.describe).join(", ")}${c.fields.length > 5 ? ", ..." : ""}`
          : `${c.column}: ${sides.a} ${short(c.expected)}, ${sides.b} ${short(c.live)}`
      ).join("; ")
  }
}

const logCheckText = (log: LogIntegrity.Report): ReadonlyArray<string> => {
  const head = log.problems === 0
    ? `log: ${log.records} records checked: offsets in order, ids and dedupe keys unique, bodies decodable`
    : `log: ${log.records} records checked: ${log.problems} problem${log.problems === 1 ? "" : "s"} (${Object.entries(log.byKind).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(", ")})`
  return log.problems === 0 ? [head] : [head, Output.table(["offset", "problem", "detail"], log.details.map((p) => [p.offset, p.kind, p.detail])), ""]
}

const verifyText = (r: Verify.Report): string => {
  const scope = `the log (${r.source}, ${r.records} records${r.untilOffset === null ? "" : ` up to offset ${r.untilOffset}`}${r.until === null ? "" : ` until ${r.until}`}; tenant ${r.tenant})`
  const lines = [
    ...(r.log === null ? [] : logCheckText(r.log)),
    r.differences === 0
      ? `verify: ${r.live} matches ${scope}`
      : `verify: ${r.live} differs from ${scope}: ${r.differences} difference${r.differences === 1 ? "" : "s"}`,
    "",
    Output.table(["table", "log rows", "live rows", "missing", "extra", "changed"],
      Object.entries(r.tables).map(([t, x]) => [t, x.expectedRows, x.liveRows, x.missing, x.extra, x.changed]))
  ]
  if (r.differences > 0) {
    lines.push("", `differences${r.details.length < r.differences ? ` (first ${r.details.length})` : ""} (field changes read log -> live):`)
    lines.push(Output.table(["table", "entity", "difference", "detail"], r.details.map((d) => [d.table, d.entity, d.kind, differenceText(d)])))
  }
  return lines.join("\n")
}

const verify = Command.make("verify", {
  ...Options.source,
  live: Flag.String("live").pipe(Flag.withMetavar("path"), Flag.withDescription("The live read-model file to check")),
  tenant: Options.tenant,
  until: Options.instant("until", "Compare as of this instant"),
  untilOffset: Options.untilOffset,
  ignoreCheckpoint: Flag.Boolean("ignore-checkpoint").pipe(
    Flag.withDescription("Replay the whole log, not only up to the live file's checkpoint"),
    Flag.withDefault(false)
  ),
  consumer: Flag.String("consumer").pipe(Flag.withDescription("Checkpoint name in the live file"), Flag.withDefault("read-models")),
  maxDifferences: Flag.Int("max-differences").pipe(Flag.withDescription("Differences listed (all are counted)"), Flag.withDefault(100)),
  skipLogCheck: Flag.Boolean("skip-log-check").pipe(
    Flag.withDescription("Do not check the log itself (offsets, ids, dedupe keys, bodies)"),
    Flag.withDefault(false)
  ),
  dedupeWindow: Flag.Int("dedupe-window-seconds").pipe(
    Flag.withDescription("A tenant's dedupe key must not repeat within this (the server's webhooks.dedupeWindowSeconds)"),
    Flag.withDefault(86_400)
  ),
  format: summaryFormat,
  progress
}, (f) =>
  withSource(f, Effect.gen(function*() {
    const report = yield* Verify.run({
      live: f.live,
      tenant: opt(f.tenant),
      untilOffset: opt(f.untilOffset),
      untilMs: opt(f.until),
      useCheckpoint: !f.ignoreCheckpoint,
      consumer: f.consumer,
      progress: f.progress,
      maxDifferences: Math.max(0, f.maxDifferences),
      checkLog: !f.skipLogCheck,
      dedupeWindowMillis: Math.max(0, f.dedupeWindow) * 1000
    })
    yield* Console.log(f.format === "json" ? Json.stringify(report) : verifyText(report))
    if (!report.equal) {
      const count = report.differences + (report.log?.problems ?? 0)
      return yield* new DifferencesFound({ count, message: `${report.differences} differences, ${report.log?.problems ?? 0} log problems` })
    }
  }))).pipe(
    Command.withDescription(
      "Check the log itself (offsets, ids, dedupe keys, bodies), then rebuild the read models into a temporary file and compare them with a live file, per table and entity; exit 1 on any problem or difference"
    ),
    Command.withExamples([
      { command: "ocs-replay verify --live .ocs-data/demo/read-models.sqlite", description: "Check the demo's read models against its log" },
      { command: "ocs-replay verify --live rm.sqlite --tenant 1001:42 --format json", description: "One tenant, as JSON" }
    ])
  )

const compareText = (r: Verify.CompareReport): string => {
  const lines = [
    r.equal
      ? `compare: ${r.a} and ${r.b} hold the same read models (tenant ${r.tenant})`
      : `compare: ${r.a} and ${r.b} differ (tenant ${r.tenant}): ${r.differences} difference${r.differences === 1 ? "" : "s"}`,
    "",
    Output.table(["table", "rows (a)", "rows (b)", "only in a", "only in b", "changed"],
      Object.entries(r.tables).map(([t, x]) => [t, x.expectedRows, x.liveRows, x.missing, x.extra, x.changed]))
  ]
  if (!r.equal) {
    lines.push("", `differences${r.details.length < r.differences ? ` (first ${r.details.length})` : ""} (field changes read a -> b):`)
    lines.push(Output.table(["table", "entity", "difference", "detail"], r.details.map((d) => [d.table, d.entity, d.kind === "missing" ? "only in a" : d.kind === "extra" ? "only in b" : d.kind, differenceText(d, { a: "a", b: "b" })])))
  }
  return lines.join("\n")
}

const compare = Command.make("compare", {
  a: Argument.String("a").pipe(Argument.withDescription("A read-model SQLite file")),
  b: Argument.String("b").pipe(Argument.withDescription("Another read-model SQLite file")),
  tenant: Options.tenant,
  maxDifferences: Flag.Int("max-differences").pipe(Flag.withDescription("Differences listed (all are counted)"), Flag.withDefault(100)),
  format: summaryFormat
}, (f) =>
  Effect.gen(function*() {
    const report = yield* Verify.compareFiles({ a: f.a, b: f.b, tenant: opt(f.tenant), maxDifferences: Math.max(0, f.maxDifferences) })
    yield* Console.log(f.format === "json" ? Json.stringify(report) : compareText(report))
    if (!report.equal) return yield* new DifferencesFound({ count: report.differences, message: `${report.differences} differences` })
  }).pipe(Effect.mapError(toReplayError))).pipe(
    Command.withDescription("Compare two read-model files per table and entity (content columns, as verify does); exit 1 on any difference"),
    Command.withExamples([
      { command: "ocs-replay compare /tmp/rm-monday.sqlite /tmp/rm-tuesday.sqlite", description: "Two replays" },
      { command: "ocs-replay compare a.sqlite b.sqlite --tenant 1001:42 --format json", description: "One tenant, as JSON" }
    ])
  )

// ---------------------------------------------------------------------------------------------

const auditOptions = (f: {
  readonly tenant: Option.Option<LogRecord.TenantKey>
  readonly type: ReadonlyArray<string>
  readonly source: ReadonlyArray<LogRecord.Source>
  readonly entity: Option.Option<string>
  readonly from: Option.Option<number>
  readonly to: Option.Option<number>
  readonly untilOffset: Option.Option<number>
  readonly limit: Option.Option<number>
}) =>
  Effect.gen(function*() {
    const fromMs = opt(f.from)
    const toMs = opt(f.to)
    if (fromMs !== undefined && toMs !== undefined && fromMs > toMs) {
      return yield* new UsageError({ message: `--from (${Output.iso(fromMs)}) is after --to (${Output.iso(toMs)})` })
    }
    return {
      tenant: opt(f.tenant),
      types: f.type,
      sources: f.source,
      entity: opt(f.entity),
      fromMs,
      toMs,
      untilOffset: opt(f.untilOffset),
      limit: opt(f.limit)
    }
  })

const historyCommand = Command.make("history", {
  entity: Argument.String("entity-id").pipe(Argument.withDescription("Product, order, payment or document id")),
  ...Options.source,
  tenant: Flag.String("tenant").pipe(
    Flag.withMetavar("appId:businessId"),
    Flag.withDescription("The entity's tenant, e.g. 1001:42"),
    Flag.mapTryCatch(Options.parseTenant, (e) => (e instanceof Error ? e.message : String(e)))
  ),
  from: Options.instant("from", "Only events received at or after this instant"),
  to: Options.instant("to", "Only events received at or before this instant"),
  untilOffset: Options.untilOffset,
  format: Flag.Literals("format", ["table", "json", "ndjson"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("table")),
  out: Options.out("Write to this file instead of stdout")
}, (f) =>
  withSource(f, Audit.history({
    entity: f.entity,
    tenant: f.tenant,
    fromMs: opt(f.from),
    toMs: opt(f.to),
    untilOffset: opt(f.untilOffset),
    format: f.format
  }, opt(f.out)))).pipe(
    Command.withDescription("Every event that touched an entity, in log order, with the fields each one changed"),
    Command.withExamples([
      { command: "ocs-replay history 9007199254740993 --tenant 1001:42", description: "A product's history" },
      { command: "ocs-replay audit history 9007199254740993 --tenant 1001:42 --format json", description: "The same, as JSON" }
    ])
  )

const audit = Command.make("audit", {
  ...Options.source,
  ...Options.recordFilters,
  format: Flag.Literals("format", ["table", "json", "ndjson"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("table")),
  out: Options.out("Write to this file instead of stdout")
}, (f) =>
  withSource(f, Effect.gen(function*() {
    const options = yield* auditOptions(f)
    yield* Audit.audit({ ...options, format: f.format }, opt(f.out))
  }))).pipe(
    Command.withDescription("Query the log by tenant, type, entity, time range and source (see also: audit history <entity-id>)"),
    Command.withExamples([
      { command: "ocs-replay audit --tenant 1001:42 --type productUpdate --from 2024-05-01", description: "Product updates of one tenant since May 1st" },
      { command: "ocs-replay audit --tenant 1001:42 --entity 9007199254740993 --format ndjson", description: "Every record about one entity, as NDJSON" },
      { command: "ocs-replay audit --source system --type transport.LockTaken", description: "Rate-limit locks" }
    ]),
    Command.withSubcommands([historyCommand])
  )

// ---------------------------------------------------------------------------------------------

const exportCommand = Command.make("export", {
  ...Options.source,
  ...Options.recordFilters,
  table: Flag.String("table").pipe(
    Flag.withDescription("Export this read-model table (e.g. products) from --db instead of log records"),
    Flag.optional
  ),
  db: Flag.String("db").pipe(Flag.withMetavar("path"), Flag.withDescription("Read-model SQLite file (with --table)"), Flag.optional),
  format: Flag.Literals("format", ["ndjson", "csv"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("ndjson")),
  out: Options.out("Write to this file instead of stdout")
}, (f) => {
  if (Option.isSome(f.table) || Option.isSome(f.db)) {
    if (Option.isNone(f.table) || Option.isNone(f.db)) {
      return Effect.fail(new UsageError({ message: "export of a read-model table needs both --table and --db (e.g. --table products --db read-models.sqlite)" }))
    }
    const logOnly = f.type.length > 0 || f.source.length > 0 || Option.isSome(f.entity) || Option.isSome(f.from) || Option.isSome(f.to) ||
      Option.isSome(f.untilOffset) || Option.isSome(f.log) || Option.isSome(f.kafkaBrokers)
    if (logOnly) {
      return Effect.fail(new UsageError({ message: "--table exports a read-model table: only --tenant, --format and --out apply (not the log filters)" }))
    }
    return Export.table({ table: f.table.value, db: f.db.value, tenant: opt(f.tenant), format: f.format }, opt(f.out)).pipe(
      Effect.mapError(toReplayError),
      Effect.asVoid
    )
  }
  return withSource(f, Effect.gen(function*() {
    const options = yield* auditOptions(f)
    yield* Export.log({ ...options, format: "ndjson", exportFormat: f.format }, opt(f.out))
  }))
}).pipe(
  Command.withDescription("Stream log records (filters as audit) or a read-model table as NDJSON or CSV"),
  Command.withExamples([
    { command: "ocs-replay export --tenant 1001:42 --type orderAdd --format csv --out orders.csv", description: "Order webhooks of one tenant as CSV" },
    { command: "ocs-replay export --table products --db .ocs-data/demo/read-models.sqlite --tenant 1001:42", description: "A read-model table as NDJSON" }
  ])
)

// ---------------------------------------------------------------------------------------------

const stats = Command.make("stats", {
  ...Options.source,
  tenant: Options.tenant,
  from: Options.instant("from", "Only records received at or after this instant"),
  to: Options.instant("to", "Only records received at or before this instant"),
  format: summaryFormat
}, (f) =>
  withSource(f, Effect.gen(function*() {
    const s = yield* Stats.run({ tenant: opt(f.tenant), fromMs: opt(f.from), toMs: opt(f.to) })
    yield* Console.log(f.format === "json" ? JSON.stringify(s) : Stats.text(s))
  }))).pipe(
    Command.withDescription("Counts per tenant, type and day; duplicates dropped; rate-limit locks seen"),
    Command.withExamples([{ command: "ocs-replay stats --log .ocs-data/demo/events.sqlite", description: "Everything in the demo's log" }])
  )

const commandsCommand = Command.make("commands", {
  ...Options.source,
  tenant: Options.tenant,
  entity: Flag.String("entity").pipe(Flag.withDescription("Only commands on this entity (the service's id) or with this command id"), Flag.optional),
  kind: Flag.String("kind").pipe(Flag.withDescription("Only this kind, e.g. order.add"), Flag.optional),
  from: Options.instant("from", "Only commands asked at or after this instant"),
  to: Options.instant("to", "Only commands asked at or before this instant"),
  format: Flag.Literals("format", ["table", "json", "ndjson"]).pipe(Flag.withDescription("Output format"), Flag.withDefault("table")),
  out: Options.out("Write to this file instead of stdout")
}, (f) =>
  withSource(f, Commands.run({
    tenant: opt(f.tenant),
    entity: opt(f.entity),
    kind: opt(f.kind),
    fromMs: opt(f.from),
    toMs: opt(f.to),
    format: f.format
  }, opt(f.out)))).pipe(
    Command.withDescription("Who changed what on the service: the write path's commands from the log, one line each"),
    Command.withExamples([
      { command: "ocs-replay commands --tenant 1001:42", description: "Every command of one tenant" },
      { command: "ocs-replay commands --tenant 1001:42 --entity 9007199254740993 --format json", description: "Who changed one product" }
    ])
  )

export const command = Command.make("ocs-replay").pipe(
  Command.withDescription(
    "Replay and audit the ocs-engine event log: rebuild, verify and compare read models, query, export, stats. " +
      "Exit codes: 0 ok, 1 verify or compare found differences, 2 usage or input error, 3 other failure."
  ),
  Command.withSubcommands([replay, verify, compare, audit, historyCommand, exportCommand, stats, commandsCommand])
)

