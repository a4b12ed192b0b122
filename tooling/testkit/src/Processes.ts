/**
 * The real programs as child processes, for suites that test them from the outside: spawn
 * `node <args>`, wait until a line of output says it is ready, stop it with a signal. Both the
 * simulator and the sync server print `listening on <url>` when they accept connections.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export interface Proc {
  readonly child: ChildProcess.ChildProcess
  /** Everything the process printed so far, stdout and stderr interleaved. */
  readonly output: () => string
  /** Sends `signal` (SIGTERM by default; SIGKILL after 15 s) and resolves with the exit code. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

/** A program that is listening, and the URL it printed. */
export interface Listening {
  readonly proc: Proc
  readonly url: string
}

export const simulatorBin = fileURLToPath(import.meta.resolve("@ocs/simulator/bin"))

const LISTENING = /listening on (https?:\/\/[\d.:]+)/

/** Spawns `node <args>` and resolves once a line of its output matches `ready`. */
export const spawnNode = (args: ReadonlyArray<string>, ready: RegExp, env: Record<string, string> = {}, timeoutMs = 60_000) =>
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

/** Spawns `node <args>` and resolves once it prints `listening on <url>`. */
export const startListening = async (
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  timeoutMs = 60_000
): Promise<Listening> => {
  const { proc, match } = await spawnNode(args, LISTENING, env, timeoutMs)
  return { proc, url: match[1]! }
}

/** The simulator as its own process on a free port (`flags` as `ocs-simulator` takes them). */
export const startSimulatorProcess = (flags: ReadonlyArray<string> = []): Promise<Listening> =>
  startListening([simulatorBin, "--port", "0", ...flags])

/** A fresh folder in the OS temp dir; the caller removes it. */
export const tempDir = (prefix: string): string => Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))

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
export const parseLoose = (text: string): any =>
  // A string is matched whole first, so digits inside one (a cursor holding a big id) stay as
  // they are; only a bare number of 16 digits or more becomes a string.
  JSON.parse(text.replace(/"(?:[^"\\]|\\.)*"|(?<=[:[,]\s*)-?\d{16,}(?=\s*[,\]}])/g, (token) => (token.startsWith('"') ? token : `"${token}"`)))

export interface RunResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `node <args>` to its end (real startup and exit code), collecting its output. */
export const runNode = (
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env?: Record<string, string> } = {}
): Promise<RunResult> =>
  new Promise((resolve, reject) => {
    const child = ChildProcess.spawn(process.execPath, args, {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s))
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })
