/**
 * The SDK's own version and the semver check a plugin's `sdkVersion` range goes through.
 *
 * The version is read from this package's package.json (src/ and dist/ both sit beside it), so
 * a release bump by changesets is the only place it changes. Ranges are npm-style and parsed
 * by Effect's `SemVerRange` (strict: no `v` prefix, no build metadata, no empty `||` parts).
 */
import { Result, SemVer, SemVerRange } from "effect"
import * as NodeFs from "node:fs"

const readVersion = (): string => {
  try {
    const pkg: unknown = JSON.parse(NodeFs.readFileSync(new URL("../package.json", import.meta.url), "utf8"))
    const v = (pkg as { readonly version?: unknown }).version
    return typeof v === "string" ? v : "0.0.0"
  } catch {
    return "0.0.0"
  }
}

/** The version of @ocs/plugin-sdk that is running. */
export const SDK_VERSION: string = readVersion()

/**
 * Whether `version` lies in the npm-style `range` (`^1.2.0`, `~0.3`, `>=1.0.0 <2`, `1.x`,
 * `1.2.0 - 1.4.0`, `a || b`, `*`). Returns `undefined` when the version or the range cannot be
 * parsed.
 *
 * A pre-release counts by its semver precedence (`0.2.0-next.1` is in `0.x` and in `<0.2.0`,
 * `1.0.0-rc.1` is not in `^1.0.0`): a pre-release SDK is checked like any other version instead
 * of being refused by every range that names no pre-release.
 */
export const satisfies = (version: string, range: string): boolean | undefined => {
  const v = SemVer.parse(version)
  const r = SemVerRange.parse(range)
  if (Result.isFailure(v) || Result.isFailure(r)) return undefined
  return SemVerRange.matches(r.success, v.success, { includePrerelease: true })
}
