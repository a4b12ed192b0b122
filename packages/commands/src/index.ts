/**
 * @ocs/commands: the write path. Commands to the API with exactly one effect and a known
 * outcome: validated, stored in the event log before they are sent, idempotent by key, sent
 * through the transport's scheduler, and resolved by reading back when an answer is lost.
 */
export * as Command from "./Command.ts"
export * as CommandEngine from "./CommandEngine.ts"
export * as CommandLedger from "./CommandLedger.ts"
export * as CommandOwnership from "./CommandOwnership.ts"
export * as Grant from "./Grant.ts"
export * as CommandOptions from "./CommandOptions.ts"
