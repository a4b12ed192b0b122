/**
 * vitest globalSetup: starts one broker for a project and provides its bootstrap servers to
 * test files as `inject("kafkaBrokers")` (see testing.ts for helpers).
 *
 *   { test: { name: "kafka", globalSetup: ["./tooling/kafka/src/globalSetup.ts"], ... } }
 *
 * - OCS_KAFKA_BROKERS set (e.g. to a broker from `./ocs --filter @ocs/kafka-broker start`):
 *   provides it as is and starts nothing.
 * - The broker cannot start because this machine lacks Java or Maven, or the jars cannot be
 *   downloaded: with CI=true the run fails (it never skips in CI); otherwise a warning is printed
 *   and "" is provided, so suites using `describe.skipIf(kafkaUnavailable())` skip.
 * - Any other failure (the broker itself does not come up) fails the run everywhere.
 *
 * Knobs: OCS_KAFKA_LOG_LEVEL (broker log4j level, default WARN, echoed to stderr when set).
 */
import type { TestProject } from "vitest/node"
import { type BrokerLogLevel, isEnvironmentError, type KafkaBroker, startBroker } from "./Broker.ts"
import { kafkaBrokersKey } from "./context.ts"

const logLevels: ReadonlyArray<BrokerLogLevel> = ["OFF", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"]

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.OCS_KAFKA_BROKERS?.trim()
  if (external) {
    project.provide(kafkaBrokersKey, external)
    return async () => {}
  }

  const requested = process.env.OCS_KAFKA_LOG_LEVEL?.toUpperCase()
  const logLevel = logLevels.find((level) => level === requested)
  const started = Date.now()
  let broker: KafkaBroker
  try {
    broker = await startBroker(logLevel ? { logLevel, echo: true } : {})
  } catch (error) {
    if (process.env.CI === "true" || !isEnvironmentError(error)) throw error
    process.stderr.write(
      `\n[kafka-broker] WARNING: no Kafka broker for project "${project.name}"; its Kafka suites are SKIPPED.\n` +
        `[kafka-broker] ${error.message.replace(/\n/g, "\n[kafka-broker] ")}\n` +
        "[kafka-broker] (with CI=true this fails the run instead)\n\n"
    )
    project.provide(kafkaBrokersKey, "")
    return async () => {}
  }
  process.stderr.write(
    `[kafka-broker] Kafka ${broker.kafkaVersion} ready at ${broker.brokers.join(",")} in ${Date.now() - started} ms\n`
  )
  project.provide(kafkaBrokersKey, broker.brokers.join(","))
  return () => broker.close()
}
