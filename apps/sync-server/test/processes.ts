/**
 * The server as a child process, started as `./ocs start` starts it. The generic pieces
 * (spawning, the simulator process, polling) come from @ocs/testkit, shared with the
 * reliability suite.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { startListening, tempDir } from "@ocs/testkit/Processes"
import { nodeEnv, nodeFlags } from "../src/ops/nodeFlags.ts"

export { eventually, parseLoose, type Proc, spawnNode, startSimulatorProcess, tempDir } from "@ocs/testkit/Processes"

export const serverBin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))

export const startServerProcess = async (config: unknown, env: Record<string, string> = {}) => {
  const dir = tempDir("ocs-server-")
  const file = Path.join(dir, "ocs.json")
  Fs.writeFileSync(file, JSON.stringify(config, null, 2))
  const { proc, url } = await startListening([...nodeFlags, serverBin, "--config", file], { ...nodeEnv, ...env })
  return { proc, url, dir }
}

/** Starts the server again on the folder (configuration and data) of an earlier start. */
export const restartServerProcess = async (dir: string, env: Record<string, string> = {}) => {
  const { proc, url } = await startListening([...nodeFlags, serverBin, "--config", Path.join(dir, "ocs.json")], { ...nodeEnv, ...env })
  return { proc, url, dir }
}
