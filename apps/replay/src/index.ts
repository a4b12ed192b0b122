/**
 * @ocs/replay: the replay and audit tool (the `ocs-replay` CLI and its building blocks).
 */
export * as Audit from "./Audit.ts"
export * as Commands from "./Commands.ts"
export * as Cli from "./Cli.ts"
export * as Entity from "./Entity.ts"
export * as Export from "./Export.ts"
export * as FieldDiff from "./FieldDiff.ts"
export * as LogSource from "./LogSource.ts"
export * as Options from "./Options.ts"
export * as Output from "./Output.ts"
export * as Progress from "./Progress.ts"
export * as ReadModelFile from "./ReadModelFile.ts"
export * as Records from "./Records.ts"
export * as Replay from "./Replay.ts"
export * as ReplayError from "./ReplayError.ts"
export * as Stats from "./Stats.ts"
export * as Verify from "./Verify.ts"
