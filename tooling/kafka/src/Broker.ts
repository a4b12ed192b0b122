/**
 * A real single-node Kafka broker (KRaft, combined broker+controller) on 127.0.0.1, for tests
 * and local work.
 *
 * The jars come from Maven Central: `mvn copy-dependencies` on ../pom.xml copies the broker's
 * runtime classpath into ../.cache/lib once (a marker file, keyed on the pom's hash, says the
 * copy is complete); later starts reuse it and take seconds. Each broker gets free ports and a
 * fresh data dir in the OS temp dir, formatted with `kafka.tools.StorageTool`, then runs
 * `kafka.Kafka`. It is ready when its log says "Kafka Server started" and a kafkajs admin client
 * can describe the cluster.
 *
 * No JVM outlives its Node process: `close()` stops it (SIGTERM, then SIGKILL after a timeout),
 * a process 'exit' handler kills whatever is left, and the JVM runs under a small watchdog
 * (../java/ParentWatchdog.java) that exits when the pipe on its stdin closes, i.e. when this
 * Node process dies in any way, SIGKILL included.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { existsSync, rmSync } from "node:fs"
import * as fs from "node:fs/promises"
import { createServer } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { Kafka, logLevel as KafkaJsLogLevel } from "kafkajs"

// -------------------------------------------------------------------------------------------
// Public surface

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

export type KafkaBrokerErrorKind =
  | "java-missing" // no usable `java` (JAVA_HOME/bin/java or PATH), or older than 11
  | "maven-missing" // no `mvn` on PATH (only needed while .cache/lib is not filled)
  | "download-failed" // Maven failed or timed out (network, repository, pom)
  | "format-failed" // kafka.tools.StorageTool format failed
  | "start-failed" // the JVM exited before it was ready
  | "start-timeout" // not ready within startTimeoutMs

/** Why a broker could not start; `output` is the tail of the tool's output (Maven, JVM). */
export class KafkaBrokerError extends Error {
  override readonly name = "KafkaBrokerError"
  readonly kind: KafkaBrokerErrorKind
  readonly output: string
  constructor(kind: KafkaBrokerErrorKind, message: string, output = "", options?: ErrorOptions) {
    super(output ? `${message}\n--- output (tail) ---\n${output}` : message, options)
    this.kind = kind
    this.output = output
  }
}

/** True when the error says this machine cannot run a broker at all (no Java, no Maven, no download). */
export const isEnvironmentError = (error: unknown): error is KafkaBrokerError =>
  error instanceof KafkaBrokerError &&
  (error.kind === "java-missing" || error.kind === "maven-missing" || error.kind === "download-failed")

export const packageDir = fileURLToPath(new URL("..", import.meta.url))
const pomPath = path.join(packageDir, "pom.xml")
const watchdogSource = path.join(packageDir, "java", "ParentWatchdog.java")
export const cacheDir = path.join(packageDir, ".cache")
const libDir = path.join(cacheDir, "lib")
const markerFile = path.join(libDir, ".complete.json")
const dataDirPrefix = "ocs-kafka-"
const startedMessage = "Kafka Server started"

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

/** Starts a broker; resolves once it is ready. Always `close()` it (or `await using`). */
export const startBroker = async (options: StartBrokerOptions = {}): Promise<KafkaBroker> => {
  const java = await findJava()
  const jars = await ensureJars(options.downloadTimeoutMs === undefined ? {} : { downloadTimeoutMs: options.downloadTimeoutMs })
  const watchdogDir = await ensureWatchdog(java)
  await sweepStaleDataDirs()

  const port = options.port ?? (await freePort())
  let controllerPort = await freePort()
  while (controllerPort === port) controllerPort = await freePort()
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), dataDirPrefix))
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
// The broker handle

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
    const properties: Record<string, string | number | boolean> = {
      "process.roles": "broker,controller",
      "node.id": 1,
      "controller.quorum.voters": `1@127.0.0.1:${c.controllerPort}`,
      listeners: `PLAINTEXT://127.0.0.1:${c.port},CONTROLLER://127.0.0.1:${c.controllerPort}`,
      "advertised.listeners": `PLAINTEXT://127.0.0.1:${c.port}`,
      "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
      "controller.listener.names": "CONTROLLER",
      "inter.broker.listener.name": "PLAINTEXT",
      "log.dirs": path.join(this.dataDir, "kraft-logs"),
      "num.partitions": 1,
      "default.replication.factor": 1,
      "min.insync.replicas": 1,
      "offsets.topic.replication.factor": 1,
      "offsets.topic.num.partitions": 1,
      "transaction.state.log.replication.factor": 1,
      "transaction.state.log.min.isr": 1,
      "transaction.state.log.num.partitions": 1,
      "group.initial.rebalance.delay.ms": 0,
      "auto.create.topics.enable": false,
      "delete.topic.enable": true,
      // a light broker for a 2-core machine
      "num.network.threads": 2,
      "num.io.threads": 2,
      "num.recovery.threads.per.data.dir": 1,
      "background.threads": 2,
      "log.cleaner.threads": 1,
      "log.cleaner.dedupe.buffer.size": 8 * 1024 * 1024,
      ...c.serverProperties
    }
    await fs.mkdir(this.configDir, { recursive: true })
    await fs.writeFile(
      this.serverPropertiesPath,
      Object.entries(properties)
        .map(([key, value]) => `${key}=${escapeProperty(String(value))}`)
        .join("\n") + "\n"
    )
    await fs.writeFile(
      path.join(this.configDir, "log4j.properties"),
      [
        `log4j.rootLogger=${c.logLevel}, stdout`,
        "log4j.appender.stdout=org.apache.log4j.ConsoleAppender",
        "log4j.appender.stdout.layout=org.apache.log4j.PatternLayout",
        "log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n",
        // the readiness line ("Kafka Server started") is logged at INFO by this logger
        "log4j.logger.kafka.server.KafkaRaftServer=INFO",
        // a harmless warning at every shutdown of a combined broker+controller
        ...(c.logLevel === "WARN" ? ["log4j.logger.org.apache.kafka.clients.NetworkClient=ERROR"] : []),
        ""
      ].join("\n")
    )
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
        await this.waitForLogLine(child, startedMessage, deadline)
        await this.waitForAdmin(child, deadline)
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

  private waitForLogLine(child: ChildProcess, text: string, deadline: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = (error?: Error) => {
        clearTimeout(timer)
        this.lineWatcher = undefined
        child.off("exit", onExit)
        if (error) reject(error)
        else resolve()
      }
      const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
        done(
          new KafkaBrokerError(
            "start-failed",
            `the Kafka JVM exited (${signal ?? `code ${code}`}) before it was ready; data dir ${this.dataDir}`,
            this.logTail(60)
          )
        )
      const timer = setTimeout(
        () =>
          done(
            new KafkaBrokerError(
              "start-timeout",
              `the Kafka JVM did not log "${text}" within ${this.config.startTimeoutMs} ms`,
              this.logTail(60)
            )
          ),
        Math.max(0, deadline - Date.now())
      )
      this.lineWatcher = (line) => {
        if (line.includes(text)) done()
      }
      child.once("error", (error) =>
        done(new KafkaBrokerError("start-failed", `could not run ${this.config.java}: ${error.message}`, "", { cause: error }))
      )
      child.once("exit", onExit)
      if (child.exitCode !== null || child.signalCode !== null) onExit(child.exitCode, child.signalCode)
    })
  }

  private async waitForAdmin(child: ChildProcess, deadline: number): Promise<void> {
    let lastError: unknown
    while (Date.now() < deadline) {
      if (this.child !== child) {
        throw new KafkaBrokerError("start-failed", "the Kafka JVM exited before it answered an admin client", this.logTail(60))
      }
      try {
        await describeCluster(this.brokers, Math.min(3_000, Math.max(500, deadline - Date.now())))
        return
      } catch (error) {
        lastError = error
        await sleep(250)
      }
    }
    throw new KafkaBrokerError(
      "start-timeout",
      `the broker at ${this.brokers.join(",")} did not answer DescribeCluster within ${this.config.startTimeoutMs} ms ` +
        `(last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`,
      this.logTail(60)
    )
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
    return fs.writeFile(
      path.join(this.dataDir, "owner.json"),
      JSON.stringify({ nodePid: process.pid, jvmPid: this.child?.pid ?? null })
    )
  }
}

// -------------------------------------------------------------------------------------------
// Helpers

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

const ansiEscape = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g")

/** The last `lines` lines of a tool's output, without colour codes (Maven 3.8 emits some even with -B). */
const tail = (text: string, lines: number) => text.replace(ansiEscape, "").trimEnd().split("\n").slice(-lines).join("\n")

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

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

const escapeProperty = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const unref = (child: ChildProcess) => {
  child.unref()
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    const handle = stream as unknown as { unref?: () => void } | null
    handle?.unref?.()
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** A random Kafka cluster id: 16 bytes, URL-safe base64 without padding (as Uuid.toString). */
const newClusterId = (): string => {
  for (;;) {
    const id = randomBytes(16).toString("base64url")
    if (!id.startsWith("-")) return id
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

const describeCluster = async (brokers: ReadonlyArray<string>, timeoutMs: number): Promise<void> => {
  const admin = new Kafka({
    clientId: "ocs-kafka-broker-readiness",
    brokers: [...brokers],
    logLevel: KafkaJsLogLevel.NOTHING,
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    retry: { retries: 0 }
  }).admin()
  try {
    await admin.connect()
    const cluster = await admin.describeCluster()
    if (cluster.brokers.length === 0) throw new Error("DescribeCluster returned no brokers")
  } finally {
    await admin.disconnect().catch(() => undefined)
  }
}

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
const findJava = (): Promise<string> =>
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
const ensureWatchdog = async (java: string): Promise<string | undefined> => {
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

/** Removes data dirs in the temp dir left by brokers whose Node process and JVM are both gone. */
const sweepStaleDataDirs = async (): Promise<void> => {
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
