/**
 * The server's lifecycle (project `postgres-server`): it dies with the process that started it,
 * even when that process is SIGKILLed, and `close()` leaves nothing behind.
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { startPostgres } from "../src/Server.ts"

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const until = async (what: () => boolean, timeoutMs: number): Promise<boolean> => {
  const deadline = Date.now() + timeoutMs
  while (!what()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return true
}

describe.skipIf(process.env.CI !== "true" && !existsSync("/usr/lib/postgresql/15/bin/postgres"))("startPostgres", () => {
  it("stops the postmaster when its Node parent is SIGKILLed, and close() deletes the folder", async () => {
    const child = spawn(process.execPath, [fileURLToPath(new URL("./fixtures/hold.ts", import.meta.url))], { stdio: ["ignore", "pipe", "inherit"] })
    const line = await new Promise<string>((resolve, reject) => {
      let text = ""
      child.stdout.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8")
        if (text.includes("\n")) resolve(text.split("\n")[0]!)
      })
      child.once("exit", (code) => reject(new Error(`the holder exited (${code}) before its server was ready`)))
    })
    const { dir, postmaster } = JSON.parse(line) as { dir: string; postmaster: number }
    expect(alive(postmaster)).toBe(true)
    child.kill("SIGKILL")
    // the pipe on the run script's stdin closes: fast shutdown, within seconds
    expect(await until(() => !alive(postmaster), 20_000)).toBe(true)

    // the next start sweeps the folder the killed process left
    expect(existsSync(dir)).toBe(true)
    const server = await startPostgres()
    expect(existsSync(dir)).toBe(false)
    await server.close()
    expect(existsSync(server.dir)).toBe(false)
  }, 90_000)
})
