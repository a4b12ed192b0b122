/**
 * Brokers' data dirs in the OS temp dir: each holds an owner.json naming the Node process and
 * the JVM that use it, so a later start can remove the dirs of brokers whose owners are both
 * gone (a Node process killed before its exit handler ran).
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

const dataDirPrefix = "ocs-kafka-"

/** A fresh data dir for one broker. */
export const newDataDir = (): Promise<string> => fs.mkdtemp(path.join(os.tmpdir(), dataDirPrefix))

/** Records who uses `dataDir`: this Node process and, once spawned, the JVM. */
export const writeOwner = (dataDir: string, jvmPid: number | undefined): Promise<void> =>
  fs.writeFile(path.join(dataDir, "owner.json"), JSON.stringify({ nodePid: process.pid, jvmPid: jvmPid ?? null }))

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Removes data dirs in the temp dir left by brokers whose Node process and JVM are both gone. */
export const sweepStaleDataDirs = async (): Promise<void> => {
  const tmp = os.tmpdir()
  let names: Array<string>
  try {
    names = (await fs.readdir(tmp)).filter((name) => name.startsWith(dataDirPrefix))
  } catch {
    return
  }
  await Promise.all(
    names.map(async (name) => {
      const dir = path.join(tmp, name)
      try {
        const owner = JSON.parse(await fs.readFile(path.join(dir, "owner.json"), "utf8")) as {
          nodePid?: number
          jvmPid?: number | null
        }
        if (typeof owner.nodePid !== "number" || owner.nodePid === process.pid || isAlive(owner.nodePid)) return
        if (typeof owner.jvmPid === "number" && isAlive(owner.jvmPid)) return
        await fs.rm(dir, { recursive: true, force: true })
      } catch {
        // not ours, or being written right now
      }
    })
  )
}
