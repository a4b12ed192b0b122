/**
 * When a starting broker is ready: its log says "Kafka Server started", then a kafkajs admin
 * client can describe the cluster (the log line alone comes before the listener answers).
 * Either wait fails with a `KafkaBrokerError` carrying the JVM's last lines when the JVM
 * exits first or the start deadline passes.
 */
import type { ChildProcess } from "node:child_process"
import { Kafka, logLevel as KafkaJsLogLevel } from "kafkajs"
import { KafkaBrokerError } from "./BrokerError.ts"

export const startedMessage = "Kafka Server started"

/** What the waits need of the broker being started. */
export interface Starting {
  readonly brokers: ReadonlyArray<string>
  readonly dataDir: string
  readonly java: string
  readonly startTimeoutMs: number
  logTail(lines?: number): string
  /** Calls `watcher` with every line the JVM prints from now on; undefined stops it. */
  watchLines(watcher: ((line: string) => void) | undefined): void
  /** Whether `child` is still the broker's JVM (false once it exited). */
  isCurrent(child: ChildProcess): boolean
}

/** Resolves when the JVM prints a line containing `text`. */
export const waitForLogLine = (b: Starting, child: ChildProcess, text: string, deadline: number): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer)
      b.watchLines(undefined)
      child.off("exit", onExit)
      if (error) reject(error)
      else resolve()
    }
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      done(
        new KafkaBrokerError(
          "start-failed",
          `the Kafka JVM exited (${signal ?? `code ${code}`}) before it was ready; data dir ${b.dataDir}`,
          b.logTail(60)
        )
      )
    const timer = setTimeout(
      () =>
        done(
          new KafkaBrokerError(
            "start-timeout",
            `the Kafka JVM did not log "${text}" within ${b.startTimeoutMs} ms`,
            b.logTail(60)
          )
        ),
      Math.max(0, deadline - Date.now())
    )
    b.watchLines((line) => {
      if (line.includes(text)) done()
    })
    child.once("error", (error) =>
      done(new KafkaBrokerError("start-failed", `could not run ${b.java}: ${error.message}`, "", { cause: error }))
    )
    child.once("exit", onExit)
    if (child.exitCode !== null || child.signalCode !== null) onExit(child.exitCode, child.signalCode)
  })

/** Resolves once an admin client can describe the cluster. */
export const waitForAdmin = async (b: Starting, child: ChildProcess, deadline: number): Promise<void> => {
  let lastError: unknown
  while (Date.now() < deadline) {
    if (!b.isCurrent(child)) {
      throw new KafkaBrokerError("start-failed", "the Kafka JVM exited before it answered an admin client", b.logTail(60))
    }
    try {
      await describeCluster(b.brokers, Math.min(3_000, Math.max(500, deadline - Date.now())))
      return
    } catch (error) {
      lastError = error
      await sleep(250)
    }
  }
  throw new KafkaBrokerError(
    "start-timeout",
    `the broker at ${b.brokers.join(",")} did not answer DescribeCluster within ${b.startTimeoutMs} ms ` +
      `(last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`,
    b.logTail(60)
  )
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

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
