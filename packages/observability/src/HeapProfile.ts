/**
 * The V8 heap profile a server runs under (docs/architecture.md §4.20).
 *
 * - `compact` (the default in SQLite mode): `--optimize-for-size --max-semi-space-size=1` and
 *   two malloc arenas. A server with a thousand idle tenants holds about 65 MB of live heap,
 *   but V8's default growth policy keeps several hundred MB resident after the first sync
 *   burst; this profile keeps the resident size close to the live heap (measured with 1,000
 *   idle tenants: 604 MB without it, 243 MB with it).
 * - `throughput` (the default in Kafka mode): V8's own defaults. The Kafka client allocates
 *   much more per record than the SQLite log, and under `--optimize-for-size` a Kafka-mode
 *   server spent 380 ms of CPU per 1,000 webhooks against 224-241 ms without it (garbage
 *   collection 2.2 s instead of 0.35 s for 20,000 webhooks). A Kafka deployment is the one
 *   that outgrew a machine: it is sized for throughput, not for the smallest footprint (with
 *   1,000 idle tenants: 746-830 MB resident, against 344 MB under `compact`).
 * - `as-launched`: whatever flags the process was started with (for operators who tune V8
 *   themselves).
 *
 * The profile is chosen by configuration (`server.heapProfile`), which is only read after
 * the process started, so the server re-executes itself in place (same process id, same
 * arguments, `process.execve`) when its flags are not the profile's. Without `execve` (Node
 * older than 22.15) it says which flags to pass and goes on as launched.
 */
import { Schema } from "effect"

/** The `server.heapProfile` setting; absent: by event log mode (`profileOf`). */
export const HeapProfileSetting = Schema.Literals(["compact", "throughput", "as-launched"])
export type HeapProfile = typeof HeapProfileSetting.Type

export interface Launch {
  /** Node flags (before the script). */
  readonly flags: ReadonlyArray<string>
  /** Environment added to the process's own. */
  readonly env: Readonly<Record<string, string>>
}

export const launches: Readonly<Record<Exclude<HeapProfile, "as-launched">, Launch>> = {
  compact: { flags: ["--optimize-for-size", "--max-semi-space-size=1"], env: { MALLOC_ARENA_MAX: "2" } },
  throughput: { flags: [], env: {} }
}

/** Set in the environment of a process re-executed under a profile (so it does not again). */
export const APPLIED_ENV = "OCS_HEAP_PROFILE_APPLIED"

/** Flags a profile sets; the launch's own copies are dropped before the profile's are added. */
const isProfileFlag = (flag: string) =>
  flag === "--optimize-for-size" || flag === "--no-optimize-for-size" || flag.startsWith("--max-semi-space-size")

/** The profile of a configuration: its own choice, else by event log mode. */
export const profileOf = (config: { readonly server: { readonly heapProfile?: HeapProfile | undefined }; readonly eventLog: { readonly mode: string } }): HeapProfile =>
  config.server.heapProfile ?? (config.eventLog.mode === "kafka" ? "throughput" : "compact")

export interface Process {
  readonly execPath: string
  readonly execArgv: ReadonlyArray<string>
  readonly argv: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
}

/**
 * What to execute for `profile`, or undefined when this process already runs under it. The
 * process is taken to run under a profile when it was re-executed for it, or when its flags
 * and environment are the profile's (`./ocs start` launches SQLite mode that way).
 */
export const relaunch = (profile: HeapProfile, process: Process): { readonly launch: Launch; readonly args: ReadonlyArray<string>; readonly env: Record<string, string> } | undefined => {
  if (profile === "as-launched" || process.env[APPLIED_ENV] === profile) return undefined
  const launch = launches[profile]
  const own = process.execArgv.filter(isProfileFlag)
  const sameFlags = own.length === launch.flags.length && launch.flags.every((f) => own.includes(f))
  const sameEnv = Object.entries(launch.env).every(([k, v]) => process.env[k] === v)
  if (sameFlags && sameEnv) return undefined
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  Object.assign(env, launch.env, { [APPLIED_ENV]: profile })
  return {
    launch,
    args: [process.execPath, ...process.execArgv.filter((f) => !isProfileFlag(f)), ...launch.flags, ...process.argv.slice(1)],
    env
  }
}
