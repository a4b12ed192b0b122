/**
 * Loads the plugins named in the server config:
 *
 * ```yaml
 * plugins:
 *   - use: "@ocs/plugin-low-stock-alert"    # a package, resolved from baseDir
 *     config: { defaultThreshold: 5, webhookUrl: "http://127.0.0.1:9000/alerts" }
 *   - use: "./my-plugin.ts"                 # a path, relative to baseDir
 * ```
 *
 * A plugin module's default export is the result of `definePlugin`. Its `sdkVersion` range is
 * checked against the running SDK; a mismatch refuses the plugin with `SdkVersionMismatch`.
 */
import { Effect, Schema } from "effect"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"
import { Plugin, PluginError } from "@ocs/plugin-sdk"

type AnyPlugin = Plugin.AnyPlugin
type Installed = Plugin.Installed
type SdkVersionMismatch = PluginError.SdkVersionMismatch
type PluginLoadError = PluginError.PluginLoadError
const { checkSdkVersion, isPlugin } = Plugin
const { PluginLoadError } = PluginError

/** One entry of the server config's `plugins` list. */
export const PluginEntry = Schema.Struct({
  /** A package name (`@ocs/plugin-order-forwarder`) or a path (`./plugins/mine.ts`). */
  use: Schema.String.check(Schema.isMinLength(1)),
  /** Given to the plugin's config schema. */
  config: Schema.optional(Schema.Unknown),
  /** Default true. */
  enabled: Schema.optional(Schema.Boolean)
})
export type PluginEntry = typeof PluginEntry.Type

export const PluginEntries = Schema.Array(PluginEntry)

export type LoadError = PluginLoadError | SdkVersionMismatch

const isPath = (use: string) => use.startsWith("./") || use.startsWith("../") || use.startsWith("/") || use.startsWith("file:") || NodePath.isAbsolute(use)

const resolvePackage = (use: string, dirs: ReadonlyArray<string>): string => {
  let first: unknown
  for (const dir of dirs) {
    try {
      return createRequire(NodePath.join(NodePath.resolve(dir), "package.json")).resolve(use)
    } catch (e) {
      first ??= e
    }
  }
  throw first
}

/**
 * Where `use` points, as a URL to import. Paths resolve against `baseDir`; package names from
 * `baseDir`, then from each of `searchDirs` (e.g. the host application, for plugins it ships).
 */
export const resolve = (use: string, baseDir: string, searchDirs: ReadonlyArray<string> = []): Effect.Effect<string, PluginLoadError> =>
  Effect.try({
    try: () => {
      if (use.startsWith("file:")) return use
      if (isPath(use)) return NodeUrl.pathToFileURL(NodePath.resolve(baseDir, use)).href
      return NodeUrl.pathToFileURL(resolvePackage(use, [baseDir, ...searchDirs])).href
    },
    catch: (cause) =>
      new PluginLoadError({
        use,
        message: `cannot resolve plugin ${JSON.stringify(use)} from ${baseDir}: ${cause instanceof Error ? cause.message.split("\n")[0] : String(cause)}`,
        cause
      })
  })

/** Imports one plugin and checks its SDK version range. */
export const load = (use: string, options: { readonly baseDir: string; readonly searchDirs?: ReadonlyArray<string> | undefined }): Effect.Effect<AnyPlugin, LoadError> =>
  Effect.gen(function*() {
    const url = yield* resolve(use, options.baseDir, options.searchDirs)
    const module = yield* Effect.tryPromise({
      try: () => import(url) as Promise<Record<string, unknown>>,
      catch: (cause) =>
        new PluginLoadError({ use, message: `cannot import plugin ${JSON.stringify(use)} (${url}): ${cause instanceof Error ? cause.message : String(cause)}`, cause })
    })
    const plugin = module["default"]
    if (!isPlugin(plugin)) {
      return yield* new PluginLoadError({
        use,
        message: `plugin module ${JSON.stringify(use)} has no plugin as its default export: export default definePlugin({ ... })`
      })
    }
    yield* checkSdkVersion(plugin)
    return plugin
  })

/** Loads every enabled entry, in order. */
export const loadAll = (entries: ReadonlyArray<PluginEntry>, options: { readonly baseDir: string; readonly searchDirs?: ReadonlyArray<string> | undefined }): Effect.Effect<ReadonlyArray<Installed>, LoadError> =>
  Effect.forEach(entries.filter((e) => e.enabled !== false), (entry) =>
    Effect.map(load(entry.use, options), (plugin): Installed => ({ plugin, config: entry.config })))
