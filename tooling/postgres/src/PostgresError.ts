/** Why a PostgreSQL server could not be had. */
export type PostgresErrorKind =
  /** No server binaries and none could be installed (no apt-get, not root, no network). */
  | "binaries-missing"
  /** No non-root user to run the server as, and none could be created. */
  | "user-missing"
  | "initdb-failed"
  | "start-failed"
  | "start-timeout"

export class PostgresServerError extends Error {
  override readonly name = "PostgresServerError"
  readonly kind: PostgresErrorKind
  /** The tail of what the failing program printed. */
  readonly output: string
  constructor(kind: PostgresErrorKind, message: string, output = "") {
    super(output === "" ? message : `${message}\n${output}`)
    this.kind = kind
    this.output = output
  }
}

/** True for the failures that mean this machine cannot run a server at all (skip outside CI). */
export const isEnvironmentError = (error: unknown): error is PostgresServerError =>
  error instanceof PostgresServerError && (error.kind === "binaries-missing" || error.kind === "user-missing")
