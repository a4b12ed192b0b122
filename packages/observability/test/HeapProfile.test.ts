import { assert, describe, it } from "vitest"
import * as HeapProfile from "../src/HeapProfile.ts"

const launched = (execArgv: ReadonlyArray<string>, env: Record<string, string> = {}) => ({
  execPath: "/usr/bin/node",
  execArgv,
  argv: ["/usr/bin/node", "/srv/bin.ts", "--config", "ocs.yaml"],
  env: { PATH: "/usr/bin", ...env }
})

describe("heap profile", () => {
  it("follows the event log mode unless the configuration names one", () => {
    assert.strictEqual(HeapProfile.profileOf({ server: {}, eventLog: { mode: "sqlite" } }), "compact")
    assert.strictEqual(HeapProfile.profileOf({ server: {}, eventLog: { mode: "kafka" } }), "throughput")
    assert.strictEqual(HeapProfile.profileOf({ server: { heapProfile: "compact" }, eventLog: { mode: "kafka" } }), "compact")
  })

  it("keeps a process that already runs under its profile", () => {
    assert.isUndefined(HeapProfile.relaunch("compact", launched(["--optimize-for-size", "--max-semi-space-size=1"], { MALLOC_ARENA_MAX: "2" })))
    assert.isUndefined(HeapProfile.relaunch("throughput", launched([])))
    assert.isUndefined(HeapProfile.relaunch("throughput", launched(["--optimize-for-size"], { OCS_HEAP_PROFILE_APPLIED: "throughput" })), "re-executed once, not again")
    assert.isUndefined(HeapProfile.relaunch("as-launched", launched(["--optimize-for-size"])))
  })

  it("re-executes with the profile's flags in place of the launch's, keeping every other flag and argument", () => {
    const r = HeapProfile.relaunch("throughput", launched(["--optimize-for-size", "--max-semi-space-size=1", "--cpu-prof"], { MALLOC_ARENA_MAX: "2" }))!
    assert.deepStrictEqual(r.args, ["/usr/bin/node", "--cpu-prof", "/srv/bin.ts", "--config", "ocs.yaml"])
    assert.strictEqual(r.env["OCS_HEAP_PROFILE_APPLIED"], "throughput")
    assert.strictEqual(r.env["PATH"], "/usr/bin")
    const c = HeapProfile.relaunch("compact", launched([]))!
    assert.deepStrictEqual(c.args, ["/usr/bin/node", "--optimize-for-size", "--max-semi-space-size=1", "/srv/bin.ts", "--config", "ocs.yaml"])
    assert.strictEqual(c.env["MALLOC_ARENA_MAX"], "2")
  })
})
