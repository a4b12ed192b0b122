export {
  type BrokerLogLevel,
  type KafkaBroker,
  KafkaBrokerError,
  type KafkaBrokerErrorKind,
  type StartBrokerOptions,
  ensureJars,
  isEnvironmentError,
  startBroker
} from "./Broker.ts"
