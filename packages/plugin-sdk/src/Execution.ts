/**
 * How a host runs a handler: attempts under a timeout with the plugin's retry policy, and a
 * runner that captures side effects instead of performing them (dry runs, tests). Used by
 * `@ocs/plugin-runtime` and by `testing.runPlugin`; a plugin author does not need it.
 */
export { execute, type Outcome, type Policy, policyOf } from "./internal/execute.ts"
export { type EventReport, makeCaptureRunner } from "./internal/captured.ts"
