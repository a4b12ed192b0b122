import { assert, describe, it } from "@effect/vitest"
import { EventLog, SqliteEventLog } from "@ocs/event-log"
import { Effect, Stream } from "effect"
import * as NodeChild from "node:child_process"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"
import { tempDir } from "./helpers.ts"

const fixture = NodeUrl.fileURLToPath(new URL("./fixtures/append-child.ts", import.meta.url))

/** Runs the appender until it acknowledged at least `atLeast` records, then SIGKILLs it. */
const runAndKill = (filename: string, atLeast: number) =>
  new Promise<Map<number, string>>((resolve, reject) => {
    const child = NodeChild.spawn(process.execPath, [fixture, filename], { stdio: ["ignore", "pipe", "pipe"] })
    const acked = new Map<number, string>()
    let buffer = ""
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8")
      const lines = buffer.split("\n")
      buffer = lines.pop()!
      for (const line of lines) {
        const [, offset, n] = line.split(" ")
        acked.set(Number(offset), n!)
      }
      if (acked.size >= atLeast && !child.killed) child.kill("SIGKILL")
    })
    child.on("exit", (code, signal) =>
      signal === "SIGKILL" ? resolve(acked) : reject(new Error(`child exited ${code}: ${stderr}`)))
  })

describe("durability", () => {
  it.live("every acknowledged append survives SIGKILL of the writer", () =>
    Effect.gen(function*() {
      const filename = NodePath.join(tempDir(), "log.db")
      const acked = yield* Effect.promise(() => runAndKill(filename, 400))
      assert.isAtLeast(acked.size, 400)
      const records = yield* Effect.gen(function*() {
        const log = yield* EventLog.EventLog
        return yield* Stream.runCollect(log.read({ tenant: "all" }))
      }).pipe(Effect.provide(SqliteEventLog.layer({ filename })))
      const stored = new Map(records.map((r) => [r.offset, r.body] as const))
      for (const [offset, n] of acked) {
        assert.strictEqual(stored.get(offset), `{"n":"${n}","big":123456789012345678901}`, `acknowledged offset ${offset} lost`)
      }
      // Per business, the stored sequence has no gaps before the last acknowledged one.
      const perWorker = new Map<string, Array<number>>()
      for (const r of records) {
        const [worker, i] = (JSON.parse(r.body) as { n: string }).n.split("-")
        perWorker.set(worker!, [...(perWorker.get(worker!) ?? []), Number(i)])
      }
      for (const seq of perWorker.values()) assert.deepStrictEqual(seq, seq.map((_, i) => i))
    }))
})
