/**
 * End-to-end replay throughput: generates an event log, then times `ocs-replay replay` run as a
 * process (startup, reading the log, decoding, projecting, indexes, summary: real CLI cost).
 *
 *   ./ocs node apps/replay/bench/replay.bench.ts [--quick]
 *
 * The mix is `@ocs/testkit/EventMix`, as in read-models' projection bench: per 1000 events, 350 product webhooks
 * (productAdd/productUpdate), 100 inventoryChange (3 stock levels each), 150 orderAdd and 4
 * product/list sync pages of 100 products (each product one event); 10 businesses, 20,000
 * products, ids beyond 2^53. Target: 1,000,000 events in under 30 s.
 */
import { EventLog, SqliteEventLog } from "@ocs/event-log"
import { Effect } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"
import { makeGenerator } from "@ocs/testkit/EventMix"
import { runNode } from "@ocs/testkit/Processes"

export interface ReplayBenchResult {
  readonly events: number
  readonly records: number
  readonly generateSeconds: number
  /** Wall time of the CLI process. */
  readonly seconds: number
  readonly eventsPerSecond: number
  readonly recordsPerSecond: number
  /** The time the CLI reported for the replay itself (without process startup). */
  readonly replaySeconds: number
  readonly targetSeconds: number | null
  readonly withinTarget: boolean | null
}

const BIN = NodeUrl.fileURLToPath(new URL("../src/bin.ts", import.meta.url))
// The same deterministic event mix as the projection benchmark, so the two figures compare.
/** Writes a log of about `target` events; returns the counts. */
export const generateLog = (filename: string, target: number) =>
  Effect.runPromise(Effect.gen(function*() {
    const log = yield* EventLog.EventLog
    const generator = makeGenerator()
    let events = 0
    let records = 0
    while (events < target) {
      const block = generator.block()
      yield* log.append(block.map((g) => g.record))
      for (const g of block) events += g.events
      records += block.length
    }
    return { events, records }
  }).pipe(Effect.scoped, Effect.provide(SqliteEventLog.layer({ filename, synchronous: "NORMAL", maxRecordsPerCommit: 50_000 }))))

const runCli = (args: ReadonlyArray<string>) => runNode([BIN, ...args])

export const runReplayBench = async (options: { readonly quick: boolean; readonly events?: number }): Promise<ReplayBenchResult> => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "replay-bench-"))
  try {
    const target = options.events ?? (options.quick ? 50_000 : 1_000_000)
    const log = NodePath.join(dir, "events.sqlite")
    const genStarted = performance.now()
    const generated = await generateLog(log, target)
    const generateSeconds = (performance.now() - genStarted) / 1000
    const started = performance.now()
    const run = await runCli(["replay", "--log", log, "--out", NodePath.join(dir, "rm.sqlite"), "--progress", "none", "--format", "json"])
    const seconds = (performance.now() - started) / 1000
    if (run.code !== 0) throw new Error(`ocs-replay replay exited ${run.code}: ${run.stderr}`)
    const summary = JSON.parse(run.stdout) as { readonly events: number; readonly records: number; readonly seconds: number }
    if (summary.events !== generated.events) throw new Error(`replayed ${summary.events} events, generated ${generated.events}`)
    const targetSeconds = target === 1_000_000 ? 30 : null
    return {
      events: summary.events,
      records: summary.records,
      generateSeconds,
      seconds,
      eventsPerSecond: summary.events / seconds,
      recordsPerSecond: summary.records / seconds,
      replaySeconds: summary.seconds,
      targetSeconds,
      withinTarget: targetSeconds === null ? null : seconds < targetSeconds
    }
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const r = await runReplayBench({ quick: process.argv.includes("--quick") })
  console.table([{ scenario: "ocs-replay replay (process)", events: r.events, records: r.records, seconds: +r.seconds.toFixed(2), "events/s": Math.round(r.eventsPerSecond), "records/s": Math.round(r.recordsPerSecond) }])
  console.log(JSON.stringify({ bench: "replay/cli", ...r }))
}
