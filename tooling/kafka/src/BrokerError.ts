/**
 * Why a broker could not start, by kind, so callers can tell a machine that cannot run a
 * broker at all (no Java, no Maven, no download: suites skip outside CI) from a broker that
 * failed.
 */

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
