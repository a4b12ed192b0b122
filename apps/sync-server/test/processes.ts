/**
 * Test helpers that run the real programs as child processes: the simulator and the server.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { nodeEnv, nodeFlags } from "../src/nodeFlags.ts"

export interface Proc {
  readonly child: ChildProcess.ChildProcess
  readonly output: () => string
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

const here = Path.dirname(fileURLToPath(import.meta.url))
export const simulatorBin = fileURLToPath(import.meta.resolve("@ocs/simulator/bin"))
export const serverBin = Path.resolve(here, "../src/bin.ts")

/** Spawns `node <args>` and resolves once a line of its output matches `ready`. */
export const spawnNode = (args: ReadonlyArray<string>, ready: RegExp, env: Record<string, string> = {}, timeoutMs = 30_000) =>
  new Promise<{ proc: Proc; match: RegExpMatchArray }>((resolve, reject) => {
    const child = ChildProcess.spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let done = false
    const timer = setTimeout(() => {
      if (!done) {
        done = true
        child.kill("SIGKILL")
        reject(new Error(`not ready within ${timeoutMs} ms: ${args.join(" ")}\n${out.slice(-4000)}`))
      }
    }, timeoutMs)
    const onData = (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const match = out.match(ready)
      if (match && !done) {
        done = true
        clearTimeout(timer)
        resolve({ proc, match })
      }
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", onData)
    child.once("exit", (code) => {
      if (!done) {
        done = true
        clearTimeout(timer)
        reject(new Error(`exited with ${code} before ready: ${args.join(" ")}\n${out.slice(-4000)}`))
      }
    })
    const proc: Proc = {
      child,
      output: () => out,
      stop: (signal = "SIGTERM") =>
        new Promise((res) => {
          if (child.exitCode !== null || child.signalCode !== null) return res(child.exitCode)
          const kill = setTimeout(() => child.kill("SIGKILL"), 15_000)
          child.once("exit", (code) => {
            clearTimeout(kill)
            res(code)
          })
          child.kill(signal)
        })
    }
  })

export const startSimulatorProcess = async (flags: ReadonlyArray<string> = []) => {
  const { proc, match } = await spawnNode([simulatorBin, "--port", "0", ...flags], /listening on (http:\/\/[\d.:]+)/)
  return { proc, url: match[1]! }
}

export const tempDir = (prefix: string) => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))

export const startServerProcess = async (config: unknown, env: Record<string, string> = {}) => {
  const dir = tempDir("ocs-server-")
  const file = Path.join(dir, "ocs.json")
  Fs.writeFileSync(file, JSON.stringify(config, null, 2))
  // Started as `./ocs start` starts it.
  const { proc, match } = await spawnNode([...nodeFlags, serverBin, "--config", file], /listening on (http:\/\/[\d.:]+)/, { ...nodeEnv, ...env })
  return { proc, url: match[1]!, dir }
}

/** Polls `check` until it returns a value, or fails after `timeoutMs`. */
export const eventually = async <A>(what: string, check: () => Promise<A | undefined>, timeoutMs = 60_000, everyMs = 250): Promise<A> => {
  const until = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < until) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (e) {
      last = e
    }
    await new Promise((r) => setTimeout(r, everyMs))
  }
  throw new Error(`timed out waiting for ${what}${last === undefined ? "" : `: ${String(last)}`}`)
}

/** JSON with integers beyond 2^53 kept as strings (for comparing ids). */
export const parseLoose = (text: string): any => JSON.parse(text.replace(/(?<=[:[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '"$1"'))
