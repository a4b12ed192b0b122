/**
 * The server as a child process, started as `./ocs start` starts it. The generic pieces
 * (spawning, the simulator process, polling) come from @ocs/testkit, shared with the
 * reliability suite.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { eventually, parseLoose, type Proc, startListening, tempDir } from "@ocs/testkit/Processes"
import { nodeEnv, nodeFlags } from "../src/ops/nodeFlags.ts"

export { eventually, parseLoose, type Proc, spawnNode, startSimulatorProcess, tempDir } from "@ocs/testkit/Processes"

export const serverBin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))

export const startServerProcess = async (config: unknown, env: Record<string, string> = {}, readyTimeoutMs?: number) => {
  const dir = tempDir("ocs-server-")
  const file = Path.join(dir, "ocs.json")
  Fs.writeFileSync(file, JSON.stringify(config, null, 2))
  const { proc, url } = await startListening([...nodeFlags, serverBin, "--config", file], { ...nodeEnv, ...env }, readyTimeoutMs)
  return { proc, url, dir }
}

/** Starts the server again on the folder (configuration and data) of an earlier start. */
export const restartServerProcess = async (dir: string, env: Record<string, string> = {}) => {
  const { proc, url } = await startListening([...nodeFlags, serverBin, "--config", Path.join(dir, "ocs.json")], { ...nodeEnv, ...env })
  return { proc, url, dir }
}

/**
 * Calls of the server's admin API with `adminKey`, once it listens (`url` is read per call):
 * the status and the body, ids beyond 2^53 kept as strings.
 */
export const adminClient = (url: () => string, adminKey: string) => async (path: string, init: RequestInit = {}) => {
  const r = await fetch(`${url()}${path}`, { ...init, headers: { "x-admin-key": adminKey, "content-type": "application/json", ...init.headers } })
  return { status: r.status, body: parseLoose(await r.text()) }
}

/** Stops the server with SIGTERM, then the simulator; the server must exit cleanly (0). */
export const stopServerAndSimulator = async (server: { readonly proc: Proc } | undefined, sim: { readonly proc: Proc } | undefined) => {
  const code = await server?.proc.stop("SIGTERM")
  await sim?.proc.stop("SIGTERM")
  if (code !== 0) throw new Error(`server exit code after SIGTERM: ${code}\n${server?.proc.output().slice(-3000)}`)
}

/** Waits (90 s at most) until `resources` of the server's resources (tenants x reads) finished a full sync. */
export const fullSyncsDone = (admin: ReturnType<typeof adminClient>, resources: number, what: string) =>
  eventually(what, async () => {
    const { body } = await admin("/admin/sync")
    const done = body.sync.filter((s: any) => s.fullCompletedAt !== null).length
    return done === resources ? done : undefined
  }, 90_000, 500)
