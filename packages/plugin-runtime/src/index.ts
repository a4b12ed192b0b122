/**
 * @ocs/plugin-runtime: runs plugins written with @ocs/plugin-sdk. Loads them from the host's
 * configuration, follows the event log for each on its own fiber with its own checkpoint, keeps
 * their key-value stores and dead letters (`plugins.sqlite`), and dry-runs a plugin over a log.
 *
 * Hosts (the sync server) depend on it; a plugin does not, except as a devDependency for the
 * end-to-end harness (`@ocs/plugin-runtime/testing`) and dry runs.
 */
export * as DryRun from "./DryRun.ts"
export * as PluginLoader from "./PluginLoader.ts"
export * as PluginRuntime from "./PluginRuntime.ts"
export * as PluginStore from "./PluginStore.ts"
