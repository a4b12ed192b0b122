/**
 * Failures of the replay tool, each with a message a person can act on and an exit code:
 * 2 for usage and input errors (the command line or a file given on it is wrong), 1 only for
 * `verify` finding differences, 3 for failures while running (a damaged file, Kafka down).
 */
import { Runtime, Schema } from "effect"
import { CliError } from "effect/cli"

export const EXIT_OK = 0
export const EXIT_DIFFERENCES = 1
export const EXIT_USAGE = 2
export const EXIT_FAILURE = 3

/** The command line does not make sense (missing flag, conflicting flags, unknown table). */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  message: Schema.String
}) {
  override get [CliError.userMessage]() {
    return this.message
  }
  override get [Runtime.errorExitCode]() {
    return EXIT_USAGE
  }
}

/** A file named on the command line is missing (or in the way, for an output file). */
export class InputFileError extends Schema.TaggedError<InputFileError>()("InputFileError", {
  filename: Schema.String,
  message: Schema.String
}) {
  override get [CliError.userMessage]() {
    return this.message
  }
  override get [Runtime.errorExitCode]() {
    return EXIT_USAGE
  }
}

/** `verify` found differences; they were already printed. */
export class DifferencesFound extends Schema.TaggedError<DifferencesFound>()("DifferencesFound", {
  count: Schema.Number,
  message: Schema.String
}) {
  override get [Runtime.errorExitCode]() {
    return EXIT_DIFFERENCES
  }
  override get [Runtime.errorReported]() {
    return false
  }
}

/** Anything else that stopped a command (SQLite, Kafka, a damaged record), with its message. */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", {
  message: Schema.String,
  cause: Schema.Defect()
}) {
  override get [CliError.userMessage]() {
    return this.message
  }
  override get [Runtime.errorExitCode]() {
    return EXIT_FAILURE
  }
}

export type ReplayError = UsageError | InputFileError | DifferencesFound | CommandFailed

const isReplayError = (u: unknown): u is ReplayError =>
  typeof u === "object" && u !== null && "_tag" in u &&
  (u._tag === "UsageError" || u._tag === "InputFileError" || u._tag === "DifferencesFound" || u._tag === "CommandFailed")

/** Keeps our own errors; turns any other typed failure into `CommandFailed` with its message. */
export const toReplayError = (error: unknown): ReplayError => {
  if (isReplayError(error)) return error
  const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : "Error"
  const message = typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)
  // An output file that is in the way (rebuild refuses to overwrite) is an input error.
  if (tag === "RebuildTargetExists") {
    return new InputFileError({ filename: (error as { filename?: string }).filename ?? "", message })
  }
  return new CommandFailed({ message: `${tag}: ${message}`, cause: error })
}
