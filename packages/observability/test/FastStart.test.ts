/**
 * FastStart's resolver against Node's own: every answer it gives, for the whole module graph of
 * the event log (drizzle-orm's and effect's files, kafkajs's CommonJS), is the URL and
 * format Node gives. Real processes, the Node that runs the tests.
 */
import * as NodeChildProcess from "node:child_process"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"
import { assert, describe, it } from "vitest"
import { install } from "../src/FastStart.ts"

const here = NodePath.dirname(NodeUrl.fileURLToPath(import.meta.url))

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = NodeChildProcess.execFile(process.execPath, [...args], {
      cwd: here,
      env: { ...process.env, ...env },
      timeout: 60_000,
      maxBuffer: 16 * 1024 * 1024
    }, (error, stdout, stderr) => {
      if (error !== null && error.code === undefined) reject(error)
      else resolve({ code: child.exitCode, stdout, stderr })
    })
  })

describe("FastStart", () => {
  it("answers exactly as Node would, for every relative import between the files of a dependency", async () => {
    const r = await run([
      NodePath.join(here, "fixtures", "compare-resolve.mjs"),
      "@ocs/event-log"
    ], { NODE_DISABLE_COMPILE_CACHE: "1" })
    assert.strictEqual(r.code, 0, r.stderr)
    const result = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as {
      asked: number
      answered: number
      differences: ReadonlyArray<unknown>
    }
    assert.deepStrictEqual(result.differences, [])
    // The graph is large and mostly dependency files: the hook answers most of it.
    assert.isAbove(result.answered, 1000, JSON.stringify(result))
    assert.isBelow(result.answered, result.asked)
  }, 90_000)

  it("OCS_FAST_START=0 leaves Node as launched", () => {
    assert.deepStrictEqual(install({ OCS_FAST_START: "0" }), { resolveHook: false, compileCache: false })
  })

  it("a launcher that installs it runs the same program", async () => {
    const script = `import { install } from ${JSON.stringify(NodePath.join(here, "..", "src", "FastStart.ts"))}
const installed = install()
const { EventLog } = await import("@ocs/event-log")
console.log(JSON.stringify({ installed, hasEventLog: typeof EventLog }))`
    const r = await run(["--input-type=module", "-e", script])
    assert.strictEqual(r.code, 0, r.stderr)
    assert.deepStrictEqual(JSON.parse(r.stdout), { installed: { resolveHook: true, compileCache: true }, hasEventLog: "object" })
  }, 90_000)
})
