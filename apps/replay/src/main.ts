/**
 * The replay and audit tool's program (`bin.ts` launches it). See README.md.
 *
 * Exit codes: 0 ok, 1 `verify` found differences, 2 usage or input error, 3 other failure.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Console, Effect, Exit, Layer, Runtime } from "effect"
import { CliConfig, CliError, CliOutput, Command, GlobalFlag } from "effect/cli"
import { command } from "./Cli.ts"
import { EXIT_FAILURE, EXIT_USAGE } from "./ReplayError.ts"

/** Help and version on stdout; an invalid invocation on stderr (stdout may be a data pipe). */
const presenter: CliOutput.Presenter = {
  present: (event) =>
    event._tag === "InvalidInvocation"
      ? Effect.gen(function*() {
        const formatter = yield* CliOutput.Formatter
        yield* Console.error(formatter.formatErrors(event.errors))
        yield* Console.error(`Run "${[...event.commandPath, "--help"].join(" ")}" for usage.`)
      })
      : CliOutput.defaultPresenter.present(event)
}

const exitCode = (exit: Exit.Exit<unknown, unknown>): number => {
  if (Exit.isSuccess(exit)) return 0
  if (Cause.hasInterruptsOnly(exit.cause)) return 130
  const error = Cause.squash(exit.cause)
  if (CliError.isCliError(error)) return EXIT_USAGE
  return typeof error === "object" && error !== null && Runtime.errorExitCode in error ? Runtime.getErrorExitCode(error) : EXIT_FAILURE
}

command.pipe(
  Command.run({ version: "0.0.0" }),
  Effect.provide(Layer.mergeAll(
    NodeServices.layer,
    CliConfig.layer({ builtIns: [GlobalFlag.Help, GlobalFlag.Version] }),
    CliOutput.layerPresenter(presenter)
  )),
  NodeRuntime.runMain({
    // Let stdout drain before the process ends: set the code, do not exit(code) right away.
    teardown: (exit, onExit) => {
      const code = exitCode(exit)
      process.exitCode = code
      onExit(code === 130 ? 130 : 0)
    }
  })
)
