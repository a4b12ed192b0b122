/**
 * `definePlugin`: a plugin is a value. It names the domain events it subscribes to (the
 * handler's event type is inferred from them), an optional config schema, and a handler that
 * receives each event with its context (see `Capabilities.PluginContext`).
 *
 * ```ts
 * export default definePlugin({
 *   name: "hello", version: "1.0.0", sdkVersion: "0.x",
 *   subscribes: ["OrderAdded"],
 *   config: Schema.Struct({ greeting: Schema.String }),
 *   handle: (event, ctx) => ctx.log.info(`${ctx.config.greeting}, order ${event.order.id}`)
 * })
 * ```
 */
import { Effect, Schema } from "effect"
import type { DomainEvent } from "@ocs/protocol"
import type { PluginContext } from "./Capabilities.ts"
import { InvalidPluginConfig, SdkVersionMismatch } from "./PluginError.ts"
import { satisfies, SDK_VERSION } from "./Version.ts"

/** Retries of a failing event before it is dead-lettered. */
export interface RetryPolicy {
  /** Attempts, the first included (runtime default 5). */
  readonly maxAttempts?: number | undefined
  /** Backoff before attempt n+1: base * 2^(n-1), capped (runtime defaults 200 ms, 30 s). */
  readonly baseDelayMillis?: number | undefined
  readonly maxDelayMillis?: number | undefined
}

export interface PluginSpec<Tags extends DomainEvent.Tag, Config> {
  /** Unique in a runtime; names its checkpoint, key-value space and dead letters. */
  readonly name: string
  readonly version: string
  /** Semver range of @ocs/plugin-sdk versions the plugin works with, e.g. `"^0.1.0"` or `"0.x"`. */
  readonly sdkVersion?: string | undefined
  readonly subscribes: ReadonlyArray<Tags>
  /** Decodes the configuration given in the server config (`plugins[].config`). */
  readonly config?: Schema.Decoder<Config> | undefined
  /** Per-attempt time limit (runtime default 30 s). */
  readonly timeoutMillis?: number | undefined
  readonly retry?: RetryPolicy | undefined
  /**
   * Handles one event. Fail (or time out) to have it retried, then dead-lettered. Delivery is
   * at least once: use `ctx.eventId` to make repeated deliveries harmless.
   */
  readonly handle: (event: DomainEvent.Of<Tags>, ctx: PluginContext<Config>) => Effect.Effect<void, unknown>
}

export const TypeId: unique symbol = Symbol.for("@ocs/plugin-sdk/Plugin") as never
export type TypeId = typeof TypeId

export interface Plugin<Tags extends DomainEvent.Tag = DomainEvent.Tag, Config = unknown> extends PluginSpec<Tags, Config> {
  readonly [TypeId]: TypeId
}

// oxlint-disable-next-line no-explicit-any
export type AnyPlugin = Plugin<any, any>

/**
 * A plugin with its raw configuration (decoded with the plugin's schema at start): what the
 * loader produces and the runtime runs.
 */
export interface Installed {
  readonly plugin: AnyPlugin
  readonly config?: unknown
}

/** Defines a plugin; its default export is what the loader expects. */
export const definePlugin = <const Tags extends DomainEvent.Tag, Config = undefined>(spec: PluginSpec<Tags, Config>): Plugin<Tags, Config> => ({
  ...spec,
  [TypeId]: TypeId
})

/** Whether a value is a plugin (also one defined by another copy of the SDK). */
export const isPlugin = (u: unknown): u is AnyPlugin =>
  typeof u === "object" && u !== null && (u as Record<symbol, unknown>)[TypeId] === TypeId &&
  typeof (u as { name?: unknown }).name === "string" && typeof (u as { handle?: unknown }).handle === "function" &&
  Array.isArray((u as { subscribes?: unknown }).subscribes)

/** Refuses a plugin whose `sdkVersion` range does not include the running SDK. */
export const checkSdkVersion = (plugin: AnyPlugin, sdkVersion: string = SDK_VERSION): Effect.Effect<void, SdkVersionMismatch> => {
  if (plugin.sdkVersion === undefined) return Effect.void
  const ok = satisfies(sdkVersion, plugin.sdkVersion)
  if (ok === true) return Effect.void
  return Effect.fail(
    new SdkVersionMismatch({
      plugin: plugin.name,
      required: plugin.sdkVersion,
      sdkVersion,
      message: ok === undefined
        ? `plugin ${plugin.name}@${plugin.version}: sdkVersion ${JSON.stringify(plugin.sdkVersion)} is not a semver range`
        : `plugin ${plugin.name}@${plugin.version} requires @ocs/plugin-sdk ${plugin.sdkVersion}, but this is ${sdkVersion}: upgrade the plugin or the SDK`
    })
  )
}

/** Decodes the raw configuration with the plugin's schema (undefined when it has none). */
export const decodeConfig = (plugin: AnyPlugin, raw: unknown): Effect.Effect<unknown, InvalidPluginConfig> => {
  if (plugin.config === undefined) return Effect.succeed(raw)
  const schema = plugin.config as Schema.Decoder<unknown>
  return Schema.decodeUnknownEffect(schema)(raw, { errors: "all" }).pipe(
    Effect.mapError((e) => new InvalidPluginConfig({ plugin: plugin.name, message: `config of plugin ${plugin.name}: ${e.message}` }))
  )
}
