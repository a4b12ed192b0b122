/**
 * The broker's configuration files: server.properties for a single-node KRaft broker (combined
 * broker+controller on loopback, sized for a 2-core machine) and log4j.properties, and the
 * cluster id its storage is formatted with.
 */
import { randomBytes } from "node:crypto"

export type PropertyValue = string | number | boolean

export interface PropertiesInput {
  readonly port: number
  readonly controllerPort: number
  /** Where the KRaft logs go. */
  readonly logDirs: string
  /** Overrides and additions, last. */
  readonly serverProperties: Readonly<Record<string, PropertyValue>>
}

/**
 * The text of server.properties. Only single-node necessities, loopback listeners and a light
 * footprint are set here; everything that decides what a client may send or what the broker keeps
 * (`message.max.bytes`, `socket.request.max.bytes`, segment and retention sizes, compression)
 * stays at Kafka's default, as on a production cluster, so a suite cannot pass on a limit only
 * the test broker has (test/kafka/BrokerDefaults.test.ts checks the running broker).
 */
export const serverProperties = (c: PropertiesInput): string => {
  const properties: Record<string, PropertyValue> = {
    "process.roles": "broker,controller",
    "node.id": 1,
    "controller.quorum.voters": `1@127.0.0.1:${c.controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${c.port},CONTROLLER://127.0.0.1:${c.controllerPort}`,
    "advertised.listeners": `PLAINTEXT://127.0.0.1:${c.port}`,
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "log.dirs": c.logDirs,
    "num.partitions": 1,
    "default.replication.factor": 1,
    "min.insync.replicas": 1,
    "offsets.topic.replication.factor": 1,
    "offsets.topic.num.partitions": 1,
    "transaction.state.log.replication.factor": 1,
    "transaction.state.log.min.isr": 1,
    "transaction.state.log.num.partitions": 1,
    // Differs from the default (3 s) on purpose, as Kafka's own sample configuration does for a
    // development broker: each new consumer group's first join would wait 3 s per suite.
    "group.initial.rebalance.delay.ms": 0,
    // Production clusters usually refuse to create topics on demand; the engine creates its own.
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
  return Object.entries(properties)
    .map(([key, value]) => `${key}=${escapeProperty(String(value))}`)
    .join("\n") + "\n"
}

/** The text of log4j.properties at `logLevel`. */
export const log4jProperties = (logLevel: string): string =>
  [
    `log4j.rootLogger=${logLevel}, stdout`,
    "log4j.appender.stdout=org.apache.log4j.ConsoleAppender",
    "log4j.appender.stdout.layout=org.apache.log4j.PatternLayout",
    "log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n",
    // the readiness line ("Kafka Server started") is logged at INFO by this logger
    "log4j.logger.kafka.server.KafkaRaftServer=INFO",
    // a harmless warning at every shutdown of a combined broker+controller
    ...(logLevel === "WARN" ? ["log4j.logger.org.apache.kafka.clients.NetworkClient=ERROR"] : []),
    ""
  ].join("\n")

const escapeProperty = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

/** A random Kafka cluster id: 16 bytes, URL-safe base64 without padding (as Uuid.toString). */
export const newClusterId = (): string => {
  for (;;) {
    const id = randomBytes(16).toString("base64url")
    if (!id.startsWith("-")) return id
  }
}
