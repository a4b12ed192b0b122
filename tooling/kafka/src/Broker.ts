/**
 * A real single-node Kafka broker (KRaft, combined broker+controller) on 127.0.0.1, for tests
 * and local work.
 *
 * The jars come from Maven Central (Toolchain.ts); later starts reuse them and take seconds.
 * Each broker gets free ports and a fresh data dir in the OS temp dir (DataDirs.ts), its
 * configuration (Properties.ts), is formatted with `kafka.tools.StorageTool`, then runs
 * `kafka.Kafka`; it is ready when Readiness.ts says so. This module holds the JVM's lifecycle.
 *
 * No JVM outlives its Node process: `close()` stops it (SIGTERM, then SIGKILL after a timeout),
 * a process 'exit' handler kills whatever is left, and the JVM runs under a small watchdog
 * (../java/ParentWatchdog.java) that exits when the pipe on its stdin closes, i.e. when this
 * Node process dies in any way, SIGKILL included.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { rmSync } from "node:fs"
import * as fs from "node:fs/promises"
import { createServer } from "node:net"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { KafkaBrokerError } from "./BrokerError.ts"
import { newDataDir, sweepStaleDataDirs, writeOwner } from "./DataDirs.ts"
import { log4jProperties, newClusterId, serverProperties } from "./Properties.ts"
import { type Starting, startedMessage, waitForAdmin, waitForLogLine } from "./Readiness.ts"
import { ensureJars, ensureWatchdog, findJava } from "./Toolchain.ts"

// Kept here too, so imports of this module from before the split keep working.
export { isEnvironmentError, KafkaBrokerError, type KafkaBrokerErrorKind } from "./BrokerError.ts"
export { cacheDir, ensureJars, packageDir } from "./Toolchain.ts"

/** The broker's own (log4j) log level. "Kafka Server started" is always logged. */
export type BrokerLogLevel = "OFF" | "ERROR" | "WARN" | "INFO" | "DEBUG" | "TRACE"

export interface StartBrokerOptions {
  /** log4j level of the broker's output (default "WARN"). */
  readonly logLevel?: BrokerLogLevel
  /** How long one start of the JVM may take until ready, Maven excluded (default 60 s). */
  readonly startTimeoutMs?: number
  /** How long a stop waits after SIGTERM before it sends SIGKILL (default 15 s). */
  readonly stopTimeoutMs?: number
  /** How long the one-time Maven download may take (default 10 min). */
  readonly downloadTimeoutMs?: number
  /** PLAINTEXT port on 127.0.0.1 (default: a free port). */
  readonly port?: number
  /** JVM heap in MiB, used for -Xms and -Xmx (default 512). */
  readonly heapMb?: number
  /** Echo the broker's output: true writes it to stderr, a function gets each line. */
  readonly echo?: boolean | ((line: string) => void)
  /** Extra server.properties entries; they override the defaults (see README.md). */
  readonly serverProperties?: Readonly<Record<string, string | number | boolean>>
}

export interface KafkaBroker extends AsyncDisposable {
  /** Bootstrap servers, e.g. ["127.0.0.1:39092"]; the same across stopProcess/startProcess. */
  readonly brokers: ReadonlyArray<string>
  /** The PLAINTEXT port. */
  readonly port: number
  /** The CONTROLLER (KRaft quorum) port. */
  readonly controllerPort: number
  /** The data dir (config, KRaft metadata and topic logs); deleted by close(). */
  readonly dataDir: string
  /** The Kafka version that runs (from pom.xml). */
  readonly kafkaVersion: string
  /** The JVM's pid while it runs, else undefined. */
  readonly pid: number | undefined
  /** True while the JVM runs. */
  readonly running: boolean
  /** The last lines the broker printed (for error reports). */
  logTail(lines?: number): string
  /** Stops the JVM (SIGTERM, then SIGKILL after stopTimeoutMs) and keeps the data dir. */
  stopProcess(): Promise<void>
  /** Starts the JVM again on the same ports and data dir; resolves when it is ready. */
  startProcess(): Promise<void>
  /** Stops the JVM and deletes the data dir. Idempotent. */
  close(): Promise<void>
}

/** Starts a broker; resolves once it is ready. Always `close()` it (or `await using`). */
export const startBroker = async (options: StartBrokerOptions = {}): Promise<KafkaBroker> => {
  const java = await findJava()
  const jars = await ensureJars(options.downloadTimeoutMs === undefined ? {} : { downloadTimeoutMs: options.downloadTimeoutMs })
  const watchdogDir = await ensureWatchdog(java)
  await sweepStaleDataDirs()

  const port = options.port ?? (await freePort())
  let controllerPort = await freePort()
  while (controllerPort === port) controllerPort = await freePort()
  const dataDir = await newDataDir()
  const broker = new Broker({
    java,
    classpath: [...(watchdogDir ? [watchdogDir] : []), path.join(jars.libDir, "*")].join(path.delimiter),
    watchdog: watchdogDir !== undefined,
    kafkaVersion: jars.kafkaVersion,
    port,
    controllerPort,
    dataDir,
    logLevel: options.logLevel ?? "WARN",
    startTimeoutMs: options.startTimeoutMs ?? 60_000,
    stopTimeoutMs: options.stopTimeoutMs ?? 15_000,
    heapMb: options.heapMb ?? 512,
    echo: options.echo === true ? (line) => process.stderr.write(`[kafka] ${line}\n`) : options.echo || undefined,
    serverProperties: options.serverProperties ?? {}
  })
  try {
    await broker.writeConfig()
    await broker.format()
    await broker.startProcess()
    return broker
  } catch (error) {
    await broker.close()
    throw error
  }
}

// -------------------------------------------------------------------------------------------
// The broker handle: the JVM's lifecycle

interface BrokerConfig {
  readonly java: string
  readonly classpath: string
  readonly watchdog: boolean
  readonly kafkaVersion: string
  readonly port: number
  readonly controllerPort: number
  readonly dataDir: string
  readonly logLevel: BrokerLogLevel
  readonly startTimeoutMs: number
  readonly stopTimeoutMs: number
  readonly heapMb: number
  readonly echo: ((line: string) => void) | undefined
  readonly serverProperties: Readonly<Record<string, string | number | boolean>>
}

/** Brokers of this process whose JVM may run or whose data dir exists; the exit handler cleans them up. */
const live = new Set<Broker>()
let exitHandlerInstalled = false
const installExitHandler = () => {
  if (exitHandlerInstalled) return
  exitHandlerInstalled = true
  process.on("exit", () => {
    for (const broker of live) broker.killNow()
  })
}

class Broker implements KafkaBroker {
  readonly brokers: ReadonlyArray<string>
  readonly port: number
  readonly controllerPort: number
  readonly dataDir: string
  readonly kafkaVersion: string
  private readonly config: BrokerConfig
  private child: ChildProcess | undefined
  private exited: Promise<void> = Promise.resolve()
  private readonly lines: Array<string> = []
  private closed = false
  private transition: Promise<void> = Promise.resolve()
  private lineWatcher: ((line: string) => void) | undefined

  constructor(config: BrokerConfig) {
    this.config = config
    this.port = config.port
    this.controllerPort = config.controllerPort
    this.dataDir = config.dataDir
    this.kafkaVersion = config.kafkaVersion
    this.brokers = [`127.0.0.1:${config.port}`]
    live.add(this)
    installExitHandler()
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  get running(): boolean {
    return this.child !== undefined
  }

  private get configDir() {
    return path.join(this.dataDir, "config")
  }

  private get serverPropertiesPath() {
    return path.join(this.configDir, "server.properties")
  }

  logTail(lines = 60): string {
    return this.lines.slice(-lines).join("\n")
  }

  async writeConfig(): Promise<void> {
    const c = this.config
    await fs.mkdir(this.configDir, { recursive: true })
    await fs.writeFile(
      this.serverPropertiesPath,
      serverProperties({
        port: c.port,
        controllerPort: c.controllerPort,
        logDirs: path.join(this.dataDir, "kraft-logs"),
        serverProperties: c.serverProperties
      })
    )
    await fs.writeFile(path.join(this.configDir, "log4j.properties"), log4jProperties(c.logLevel))
    await this.writeOwner()
  }

  async format(): Promise<void> {
    const clusterId = newClusterId()
    const child = this.spawnJava(
      ["-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"],
      ["kafka.tools.StorageTool", "format", "-t", clusterId, "-c", this.serverPropertiesPath]
    )
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once("error", reject)
      child.once("close", (code) => resolve(code))
    })
    child.stdin?.destroy()
    this.child = undefined
    if (code !== 0) {
      throw new KafkaBrokerError("format-failed", `kafka.tools.StorageTool format exited with ${code}`, this.logTail(40))
    }
  }

  startProcess(): Promise<void> {
    return this.serialize(async () => {
      if (this.closed) throw new Error("startProcess: the broker is closed")
      if (this.child) return
      const c = this.config
      const child = this.spawnJava(
        [
          `-Xms${c.heapMb}m`,
          `-Xmx${c.heapMb}m`,
          "-XX:+UseSerialGC",
          "-XX:+ExitOnOutOfMemoryError",
          "-Djava.awt.headless=true",
          `-Dkafka.logs.dir=${path.join(this.dataDir, "logs")}`
        ],
        ["kafka.Kafka", this.serverPropertiesPath]
      )
      await this.writeOwner()
      const deadline = Date.now() + c.startTimeoutMs
      try {
        await waitForLogLine(this.starting, child, startedMessage, deadline)
        await waitForAdmin(this.starting, child, deadline)
      } catch (error) {
        await this.kill(child, 0)
        throw error
      }
      unref(child)
    })
  }

  stopProcess(): Promise<void> {
    return this.serialize(async () => {
      const child = this.child
      if (child) await this.kill(child, this.config.stopTimeoutMs)
    })
  }

  close(): Promise<void> {
    return this.serialize(async () => {
      if (this.closed) return
      this.closed = true
      const child = this.child
      if (child) await this.kill(child, this.config.stopTimeoutMs)
      await fs.rm(this.dataDir, { recursive: true, force: true, maxRetries: 3 })
      live.delete(this)
    })
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }

  /** For the process 'exit' handler: synchronous, best effort. */
  killNow(): void {
    try {
      this.child?.kill("SIGKILL")
    } catch {
      // already gone
    }
    try {
      rmSync(this.dataDir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 })
    } catch {
      // the stale-dir sweep of a later start removes what is left
    }
  }

  private serialize(task: () => Promise<void>): Promise<void> {
    const next = this.transition.then(task, task)
    this.transition = next.catch(() => undefined)
    return next
  }

  private spawnJava(jvmOptions: ReadonlyArray<string>, mainAndArgs: ReadonlyArray<string>): ChildProcess {
    const c = this.config
    const args = [
      ...jvmOptions,
      `-Dlog4j.configuration=file:${path.join(this.configDir, "log4j.properties")}`,
      "-cp",
      c.classpath,
      ...(c.watchdog ? ["ParentWatchdog"] : []),
      ...mainAndArgs
    ]
    const env = { ...process.env }
    for (const name of ["JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "CLASSPATH"]) delete env[name]
    const child = spawn(c.java, args, { cwd: this.dataDir, env, stdio: ["pipe", "pipe", "pipe"] })
    this.child = child
    this.exited = new Promise<void>((resolve) => {
      child.once("exit", () => {
        if (this.child === child) this.child = undefined
        resolve()
      })
      child.once("error", () => {
        if (this.child === child) this.child = undefined
        resolve()
      })
    })
    // stdin stays open and is never written: the watchdog exits when it closes
    child.stdin?.on("error", () => undefined)
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue
      createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => {
        this.lines.push(line)
        if (this.lines.length > 400) this.lines.splice(0, this.lines.length - 300)
        c.echo?.(line)
        this.lineWatcher?.(line)
      })
    }
    return child
  }

  /** SIGTERM, wait up to `graceMs`, SIGKILL; resolves once the JVM is gone. */
  private async kill(child: ChildProcess, graceMs: number): Promise<void> {
    const exited = this.child === child ? this.exited : Promise.resolve()
    if (child.exitCode === null && child.signalCode === null) {
      if (graceMs > 0) {
        child.kill("SIGTERM")
        if (await timeout(exited, graceMs)) {
          this.lines.push(`[ocs] the JVM did not stop within ${graceMs} ms of SIGTERM; sending SIGKILL`)
          child.kill("SIGKILL")
        }
      } else {
        child.kill("SIGKILL")
      }
      await exited
    }
    child.stdin?.destroy()
    if (this.child === child) this.child = undefined
  }

  private writeOwner(): Promise<void> {
    return writeOwner(this.dataDir, this.child?.pid)
  }

  /** This broker as the readiness waits see it. */
  private get starting(): Starting {
    return {
      brokers: this.brokers,
      dataDir: this.dataDir,
      java: this.config.java,
      startTimeoutMs: this.config.startTimeoutMs,
      logTail: (lines) => this.logTail(lines),
      watchLines: (watcher) => {
        this.lineWatcher = watcher
      },
      isCurrent: (child) => this.child === child
    }
  }
}

// -------------------------------------------------------------------------------------------
// Helpers

/** Resolves true when `promise` did not settle within `ms`. */
const timeout = (promise: Promise<unknown>, ms: number): Promise<boolean> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    promise.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), ms)
    })
  ]).finally(() => clearTimeout(timer))
}

const unref = (child: ChildProcess) => {
  child.unref()
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    const handle = stream as unknown as { unref?: () => void } | null
    handle?.unref?.()
  }
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
