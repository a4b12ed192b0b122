import { assert, describe, it } from "@effect/vitest"
import { SqliteEventLog } from "@ocs/event-log"
import { ReadModels } from "@ocs/read-models"
import { Effect, Option } from "effect"
import * as NodeChild from "node:child_process"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"
import { append, files, layer, mixedRecords, readLog } from "./helpers.ts"

const fixture = NodeUrl.fileURLToPath(new URL("./fixtures/run-child.ts", import.meta.url))

/** Runs the projector child until its checkpoint passes `offset`, then SIGKILLs it. */
const runAndKill = (logFile: string, rmFile: string, offset: number) =>
  new Promise<number>((resolve, reject) => {
    const child = NodeChild.spawn(process.execPath, [fixture, logFile, rmFile], { stdio: ["ignore", "pipe", "pipe"] })
    let buffer = ""
    let stderr = ""
    let seen = 0
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8")
      const lines = buffer.split("\n")
      buffer = lines.pop()!
      for (const line of lines) {
        const match = /^checkpoint sqlite:(\d+)$/.exec(line)
        if (match !== null) seen = Math.max(seen, Number(match[1]))
      }
      if (seen >= offset && !child.killed) child.kill("SIGKILL")
    })
    child.on("exit", (code, signal) => signal === "SIGKILL" ? resolve(seen) : reject(new Error(`child exited ${code}: ${stderr}`)))
  })

const digestOf = (rmFile: string) =>
  Effect.scoped(Effect.gen(function*() {
    const rm = yield* ReadModels.make({ filename: rmFile, detectChanges: false })
    return yield* rm.digest()
  }))

describe("exactly once", () => {
  it.live("a projector killed mid-run resumes from its checkpoint and ends equal to a clean rebuild", () => {
    const f = files()
    return Effect.gen(function*() {
      const appended = yield* append(mixedRecords(6000, 7)).pipe(Effect.provide(SqliteEventLog.layer({ filename: f.log })))
      const head = appended[appended.length - 1]!.offset
      const seen = yield* Effect.promise(() => runAndKill(f.log, f.rm, 600))
      assert.isAtLeast(seen, 600)

      const rebuiltFile = NodePath.join(f.dir, "rebuilt.db")
      const resumed = yield* Effect.gen(function*() {
        const rm = yield* ReadModels.ReadModels
        const stored = Checkpoint(yield* rm.checkpoint())
        // The kill landed mid-run: the committed checkpoint is somewhere before the head.
        assert.isAtLeast(stored, seen)
        assert.isBelow(stored, head)
        const caught = yield* rm.catchUp()
        assert.strictEqual(caught.records, head - stored)
        assert.strictEqual(Checkpoint(yield* rm.checkpoint()), head)
        yield* rm.rebuild({ filename: rebuiltFile })
        return yield* rm.digest()
      }).pipe(Effect.provide(layer(f, { detectChanges: false })))
      const rebuilt = yield* digestOf(rebuiltFile)
      assert.deepStrictEqual(resumed, rebuilt)
      assert.isAbove(rebuilt.tables["products"]!.rows, 0)
    })
  }, 60_000)

  it.live("redelivered and overlapping batches apply once; the checkpoint never moves back", () => {
    const f = files()
    return Effect.gen(function*() {
      yield* append(mixedRecords(400, 3))
      const records = yield* readLog
      const once = yield* Effect.scoped(Effect.gen(function*() {
        const rm = yield* ReadModels.make({ filename: NodePath.join(f.dir, "once.db") })
        yield* rm.project(records)
        return yield* rm.digest()
      }))
      const rm = yield* ReadModels.ReadModels
      yield* rm.project(records.slice(0, 250))
      yield* rm.project(records.slice(100, 300))
      yield* rm.project(records.slice(0, 120))
      assert.strictEqual(Checkpoint(yield* rm.checkpoint()), records[299]!.offset)
      yield* rm.project(records.slice(200))
      assert.deepStrictEqual(yield* rm.digest(), once)
      // A late redelivery of old records changes nothing.
      yield* rm.project(records.slice(0, 120))
      yield* rm.project(records.slice(150, 151))
      assert.deepStrictEqual(yield* rm.digest(), once)
      assert.strictEqual(Checkpoint(yield* rm.checkpoint()), records[records.length - 1]!.offset)
    }).pipe(Effect.provide(layer(f, { detectChanges: false })))
  })
})

const Checkpoint = (checkpoint: Option.Option<string>): number => {
  const value = Option.getOrThrow(checkpoint)
  const match = /^sqlite:(\d+)$/.exec(value)
  if (match === null) throw new Error(`unexpected checkpoint ${value}`)
  return Number(match[1])
}
