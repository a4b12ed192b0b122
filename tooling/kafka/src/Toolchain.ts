/**
 * What a broker needs before it can run: a Java 11+ (`JAVA_HOME/bin/java` or `java` on PATH),
 * the broker's jars, which `mvn copy-dependencies` on ../pom.xml copies into ../.cache/lib
 * once (a marker file, keyed on the pom's hash, says the copy is complete), and the JVM-side
 * watchdog compiled from ../java/ParentWatchdog.java.
 */
import { spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { KafkaBrokerError } from "./BrokerError.ts"

export const packageDir = fileURLToPath(new URL("..", import.meta.url))
const pomPath = path.join(packageDir, "pom.xml")
const watchdogSource = path.join(packageDir, "java", "ParentWatchdog.java")
export const cacheDir = path.join(packageDir, ".cache")
const libDir = path.join(cacheDir, "lib")
const markerFile = path.join(libDir, ".complete.json")

/**
 * Makes sure the broker's jars are in .cache/lib (running Maven when they are not) and returns
 * that folder. Exported for `./ocs --filter @ocs/kafka-broker start -- --fetch-only`.
 */
export const ensureJars = async (
  options: { readonly downloadTimeoutMs?: number } = {}
): Promise<{ readonly libDir: string; readonly kafkaVersion: string; readonly downloaded: boolean }> => {
  const pom = await fs.readFile(pomPath, "utf8")
  const kafkaVersion = /<kafka\.version>([^<]+)<\/kafka\.version>/.exec(pom)?.[1] ?? "unknown"
  const pomHash = sha256(pom)
  if (await cacheIsComplete(pomHash)) return { libDir, kafkaVersion, downloaded: false }

  await fs.mkdir(cacheDir, { recursive: true })
  const staging = path.join(cacheDir, `lib.tmp-${process.pid}-${randomBytes(4).toString("hex")}`)
  try {
    const result = await run(
      "mvn",
      ["-q", "-B", "-Dstyle.color=never", "-f", pomPath, "package", `-Dkafka.lib.dir=${staging}`],
      { cwd: packageDir, timeoutMs: options.downloadTimeoutMs ?? 600_000 }
    )
    if (result.kind === "missing") {
      throw new KafkaBrokerError(
        "maven-missing",
        "Maven (`mvn`) is not on PATH; it is needed once to fetch the Kafka jars into tooling/kafka/.cache/lib " +
          "(install Maven 3.8+, e.g. `apt-get install maven`)."
      )
    }
    if (result.kind === "timeout" || result.code !== 0) {
      throw new KafkaBrokerError(
        "download-failed",
        `Maven could not fetch the Kafka ${kafkaVersion} jars (${result.kind === "timeout" ? "timed out" : `exit code ${result.code}`}); ` +
          `ran: mvn -q -B -f ${pomPath} package`,
        tail(result.output, 40)
      )
    }
    const jars = (await fs.readdir(staging)).filter((name) => name.endsWith(".jar")).sort()
    if (!jars.some((name) => name.startsWith("kafka_2.13-"))) {
      throw new KafkaBrokerError("download-failed", `Maven ran but ${staging} holds no kafka_2.13 jar`, tail(result.output, 40))
    }
    await fs.writeFile(path.join(staging, ".complete.json"), JSON.stringify({ pomHash, kafkaVersion, jars }, null, 2))
    // Another process may have filled the cache meanwhile; the first complete copy wins.
    if (await cacheIsComplete(pomHash)) return { libDir, kafkaVersion, downloaded: true }
    await fs.rm(libDir, { recursive: true, force: true })
    try {
      await fs.rename(staging, libDir)
    } catch (error) {
      if (!(await cacheIsComplete(pomHash))) throw error
    }
    return { libDir, kafkaVersion, downloaded: true }
  } finally {
    await fs.rm(staging, { recursive: true, force: true })
  }
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

const ansiEscape = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g")

/** The last `lines` lines of a tool's output, without colour codes (Maven 3.8 emits some even with -B). */
export const tail = (text: string, lines: number) => text.replace(ansiEscape, "").trimEnd().split("\n").slice(-lines).join("\n")

type RunResult =
  | { readonly kind: "exited"; readonly code: number | null; readonly output: string }
  | { readonly kind: "timeout"; readonly code: null; readonly output: string }
  | { readonly kind: "missing"; readonly code: null; readonly output: string }

/** Runs a command to completion, collecting stdout and stderr together. */
const run = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly timeoutMs: number }
): Promise<RunResult> =>
  new Promise((resolve) => {
    let output = ""
    let settled = false
    const child = spawn(command, args, { cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] })
    const collect = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      if (output.length > 200_000) output = output.slice(-100_000)
    }
    child.stdout.on("data", collect)
    child.stderr.on("data", collect)
    const timer = setTimeout(() => {
      if (settled) return
      settled = true
      child.kill("SIGKILL")
      resolve({ kind: "timeout", code: null, output })
    }, options.timeoutMs)
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(error.code === "ENOENT" ? { kind: "missing", code: null, output: error.message } : { kind: "exited", code: null, output: `${output}\n${error.message}` })
    })
    child.once("close", (code) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({ kind: "exited", code, output })
    })
  })

let javaChecked: Promise<string> | undefined
/** JAVA_HOME/bin/java, else `java` on PATH; must be Java 11 or newer. */
export const findJava = (): Promise<string> =>
  (javaChecked ??= (async () => {
    const java = process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, "bin", "java") : "java"
    const result = await run(java, ["-version"], { timeoutMs: 30_000 })
    if (result.kind !== "exited" || result.code !== 0) {
      javaChecked = undefined
      throw new KafkaBrokerError(
        "java-missing",
        `no usable Java at \`${java}\` (${result.kind === "missing" ? "not found" : result.kind}); the Kafka broker needs Java 11+ ` +
          "(install a JDK, e.g. `apt-get install openjdk-17-jdk-headless`, or set JAVA_HOME)",
        tail(result.output, 10)
      )
    }
    const major = Number(/version "(?:1\.)?(\d+)/.exec(result.output)?.[1] ?? "0")
    if (major > 0 && major < 11) {
      javaChecked = undefined
      throw new KafkaBrokerError("java-missing", `Java ${major} at \`${java}\` is too old; Kafka 3.9 needs Java 11+`, tail(result.output, 10))
    }
    return java
  })())

const cacheIsComplete = async (pomHash: string): Promise<boolean> => {
  try {
    const marker = JSON.parse(await fs.readFile(markerFile, "utf8")) as { pomHash?: string; jars?: Array<string> }
    if (marker.pomHash !== pomHash || !Array.isArray(marker.jars) || marker.jars.length === 0) return false
    const present = new Set(await fs.readdir(libDir))
    return marker.jars.every((jar) => present.has(jar))
  } catch {
    return false
  }
}

/**
 * Compiles ../java/ParentWatchdog.java into .cache/watchdog-<hash> with the javac next to
 * `java` (or on PATH). Without a javac the broker runs without the JVM-side watchdog (the
 * Node-side exit handler still kills it) and this returns undefined.
 */
export const ensureWatchdog = async (java: string): Promise<string | undefined> => {
  const source = await fs.readFile(watchdogSource, "utf8")
  const dir = path.join(cacheDir, `watchdog-${sha256(source).slice(0, 12)}`)
  if (existsSync(path.join(dir, "ParentWatchdog.class"))) return dir
  const staging = `${dir}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`
  const javac = java === "java" ? "javac" : path.join(path.dirname(java), "javac")
  try {
    const result = await run(javac, ["-nowarn", "-d", staging, watchdogSource], { timeoutMs: 120_000 })
    if (result.kind !== "exited" || result.code !== 0) {
      process.stderr.write(
        `[kafka-broker] warning: could not compile the JVM watchdog with ${javac} (${result.kind === "missing" ? "javac not found" : tail(result.output, 5)}); ` +
          "the broker then relies on the Node exit handler alone\n"
      )
      return undefined
    }
    try {
      await fs.rename(staging, dir)
    } catch (error) {
      if (!existsSync(path.join(dir, "ParentWatchdog.class"))) throw error
    }
    return dir
  } finally {
    await fs.rm(staging, { recursive: true, force: true })
  }
}
