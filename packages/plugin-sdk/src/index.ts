/**
 * @ocs/plugin-sdk: write plugins that react to domain events, and run them.
 *
 * A plugin imports only this package: `definePlugin`, the capability types of its context, the
 * domain event types (from @ocs/protocol), and the parts of `effect` a handler needs.
 */
export * as Capabilities from "./Capabilities.ts"
export * as DryRun from "./DryRun.ts"
export * as Plugin from "./Plugin.ts"
export * as PluginError from "./PluginError.ts"
export * as PluginLoader from "./PluginLoader.ts"
export * as PluginRuntime from "./PluginRuntime.ts"
export * as PluginStore from "./PluginStore.ts"
export * as Version from "./Version.ts"

export { definePlugin } from "./Plugin.ts"
export type { PluginContext } from "./Capabilities.ts"
export { SDK_VERSION } from "./Version.ts"
export { HttpError, HttpStatusError } from "./PluginError.ts"

// What handlers need from the layers below, so that a plugin depends on this package alone.
export { DomainEvent, Json, Operation, Records } from "@ocs/protocol"
export { Cause, Duration, Effect, Option, Redacted, Result, Schedule, Schema } from "effect"
