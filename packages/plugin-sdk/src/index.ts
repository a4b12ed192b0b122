/**
 * @ocs/plugin-sdk: write plugins that react to domain events.
 *
 * A plugin imports only this package: `definePlugin`, the capability types of its context, the
 * domain event types (from @ocs/protocol), and the parts of `effect` a handler needs. Its
 * dependencies are @ocs/protocol and effect: no database driver, no Kafka client. Running
 * plugins is @ocs/plugin-runtime's job.
 */
export * as Capabilities from "./Capabilities.ts"
export * as Execution from "./Execution.ts"
export * as Plugin from "./Plugin.ts"
export * as PluginError from "./PluginError.ts"
export * as Version from "./Version.ts"
export * as Views from "./Views.ts"

export { definePlugin } from "./Plugin.ts"
// Named at the top level so that a plugin's inferred default export can be written in its declarations.
export type { Plugin as PluginDefinition, PluginSpec } from "./Plugin.ts"
export type { PluginContext } from "./Capabilities.ts"
export { SDK_VERSION } from "./Version.ts"
export { HttpError, HttpStatusError } from "./PluginError.ts"

// What handlers need from the layers below, so that a plugin depends on this package alone.
export { DomainEvent, EngineRecord, Json, Operation, Records } from "@ocs/protocol"
export { Cause, Duration, Effect, Option, Redacted, Result, Schedule, Schema } from "effect"
