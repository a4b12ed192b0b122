/**
 * Starts a broker for local work and keeps it until Ctrl-C (or SIGTERM):
 *
 *   ./ocs --filter @ocs/kafka-broker start                 # free port, broker log at WARN
 *   ./ocs --filter @ocs/kafka-broker start -- --port 9092 --log-level INFO
 *   ./ocs --filter @ocs/kafka-broker start -- --fetch-only  # only fill .cache/lib with Maven
 *
 * Prints `KAFKA_BROKERS=127.0.0.1:<port>` on stdout once the broker is ready (everything else
 * goes to stderr), so `eval "$(... start | head -1)"`-style scripting works.
 */
import { parseArgs } from "node:util"
import { type BrokerLogLevel, ensureJars, KafkaBrokerError, startBroker } from "./Broker.ts"

const logLevels: ReadonlyArray<BrokerLogLevel> = ["OFF", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"]

const usage = `usage: node src/cli.ts [--port N] [--log-level ${logLevels.join("|")}] [--heap-mb N] [--quiet] [--fetch-only]`

const main = async (): Promise<number> => {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== "--"),
    options: {
      port: { type: "string" },
      "log-level": { type: "string", default: "WARN" },
      "heap-mb": { type: "string" },
      quiet: { type: "boolean", default: false },
      "fetch-only": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false }
    }
  })
  if (values.help) {
    console.error(usage)
    return 0
  }
  const logLevel = logLevels.find((level) => level === values["log-level"].toUpperCase())
  if (!logLevel) {
    console.error(`unknown --log-level ${values["log-level"]}\n${usage}`)
    return 2
  }
  const number = (name: string, value: string | undefined): number | undefined => {
    if (value === undefined) return undefined
    const n = Number(value)
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got ${value}`)
    return n
  }
  const port = number("port", values.port)
  const heapMb = number("heap-mb", values["heap-mb"])

  if (values["fetch-only"]) {
    const started = Date.now()
    const jars = await ensureJars()
    console.error(
      `Kafka ${jars.kafkaVersion} jars ${jars.downloaded ? "fetched" : "already cached"} in ${jars.libDir} (${Date.now() - started} ms)`
    )
    return 0
  }

  const started = Date.now()
  console.error("starting Kafka (the first start fetches the jars with Maven)...")
  const broker = await startBroker({
    logLevel,
    echo: !values.quiet,
    ...(port === undefined ? {} : { port }),
    ...(heapMb === undefined ? {} : { heapMb })
  })
  console.error(
    `Kafka ${broker.kafkaVersion} ready in ${Date.now() - started} ms (pid ${broker.pid}, data dir ${broker.dataDir}); Ctrl-C stops it`
  )
  console.log(`KAFKA_BROKERS=${broker.brokers.join(",")}`)

  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve)
    process.once("SIGTERM", resolve)
    process.once("SIGHUP", resolve)
    // keeps the event loop alive: the broker's own handles are unref'ed
    setInterval(() => {}, 1 << 30)
  })
  console.error("stopping Kafka...")
  await broker.close()
  console.error("stopped")
  return 0
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof KafkaBrokerError ? `kafka-broker: ${error.kind}: ${error.message}` : error)
    process.exit(1)
  }
)
