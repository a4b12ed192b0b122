/**
 * A faster process start for the programs of this repository (docs/architecture.md §4.36).
 *
 * A program's launcher calls `install()` and then loads the program with a dynamic `import()`:
 * the settings below only apply to modules loaded after them, and the static imports of a
 * module are all resolved before any of its code runs. This module imports nothing but Node's
 * own modules, so that nothing of the program is loaded before them.
 *
 * - **Module format from a per-folder cache.** For every module it resolves, Node.js looks up
 *   the nearest `package.json` to learn the module's format, and (Node 22-24) re-parses that
 *   file's whole `exports` map on every lookup. `drizzle-orm`'s `package.json` is 179 KB with
 *   447 exports, and a server loads a few hundred of its files: 1.2-1.6 s of CPU at every start
 *   went into parsing that one map again and again (measured with `--cpu-prof`). A resolve hook
 *   answers relative imports between files of a dependency itself: the same URL Node would give
 *   (the file's real path), and the format from the nearest `package.json`'s `type`, read once
 *   per folder. Anything else (bare specifiers, our own TypeScript, a package with no `type`,
 *   whose format Node detects from the syntax, a file that is missing) goes to Node unchanged.
 * - **Node's compile cache** (`module.enableCompileCache`): V8 code and stripped TypeScript are
 *   kept on disk (in the system's temporary folder unless `NODE_COMPILE_CACHE` names one), so a
 *   second start does not compile the same sources again. `NODE_DISABLE_COMPILE_CACHE=1` turns it
 *   off, as for Node itself.
 *
 * Measured on the server's `--help` (the whole module graph, nothing run): 2.6 s of CPU as
 * launched, 1.7-2.0 s with the resolve hook, 1.0-1.3 s with both once the cache is warm.
 * `OCS_FAST_START=0` launches exactly as Node would.
 */
import * as NodeFs from "node:fs"
import * as NodeModule from "node:module"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"

/** A format this hook is sure of; `undefined`: ask Node. */
export type KnownFormat = "module" | "commonjs"

export interface Resolved {
  readonly url: string
  readonly format: KnownFormat
}

/**
 * The resolver behind the hook, with its own cache (a folder -> the `type` of its nearest
 * `package.json`). `undefined` means "not mine: let Node resolve it".
 */
export const makeResolver = (): (specifier: string, parentURL: string | undefined) => Resolved | undefined => {
  const typeOfFolder = new Map<string, KnownFormat | null>()
  const folderType = (dir: string): KnownFormat | null => {
    const known = typeOfFolder.get(dir)
    if (known !== undefined) return known
    let type: KnownFormat | null
    let text: string | undefined
    try {
      text = NodeFs.readFileSync(NodePath.join(dir, "package.json"), "utf8")
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code !== "ENOENT" && code !== "ENOTDIR") text = ""
    }
    if (text === undefined) {
      // No package.json here: Node looks further up, and stops at a `node_modules` folder.
      const parent = NodePath.dirname(dir)
      type = parent === dir || NodePath.basename(dir) === "node_modules" ? null : folderType(parent)
    } else {
      try {
        const value = (JSON.parse(text) as { type?: unknown }).type
        type = value === "module" || value === "commonjs" ? value : null
      } catch {
        type = null // Node reports a broken package.json better than we would
      }
    }
    typeOfFolder.set(dir, type)
    return type
  }
  return (specifier, parentURL) => {
    if (parentURL === undefined || !parentURL.startsWith("file:") || !parentURL.includes("/node_modules/")) return undefined
    if (!(specifier.startsWith("./") || specifier.startsWith("../"))) return undefined
    if (!(specifier.endsWith(".js") || specifier.endsWith(".mjs") || specifier.endsWith(".cjs"))) return undefined
    if (specifier.includes("?") || specifier.includes("#") || specifier.includes("%")) return undefined
    let file: string
    try {
      file = NodeFs.realpathSync(NodeUrl.fileURLToPath(new URL(specifier, parentURL)))
      if (!NodeFs.statSync(file).isFile()) return undefined
    } catch {
      return undefined // missing: Node's own error says it best
    }
    const format: KnownFormat | null = file.endsWith(".mjs") ? "module" : file.endsWith(".cjs") ? "commonjs" : folderType(NodePath.dirname(file))
    return format === null ? undefined : { url: NodeUrl.pathToFileURL(file).href, format }
  }
}

export interface Installed {
  readonly resolveHook: boolean
  readonly compileCache: boolean
}

/** Applies both settings to this process (where this Node has them); see the module comment. */
export const install = (env: NodeJS.ProcessEnv = process.env): Installed => {
  if (env["OCS_FAST_START"] === "0") return { resolveHook: false, compileCache: false }
  let compileCache = false
  if (typeof NodeModule.enableCompileCache === "function" && env["NODE_DISABLE_COMPILE_CACHE"] === undefined) {
    const result = NodeModule.enableCompileCache()
    compileCache = result.status === NodeModule.constants.compileCacheStatus.ENABLED ||
      result.status === NodeModule.constants.compileCacheStatus.ALREADY_ENABLED
  }
  let resolveHook = false
  if (typeof NodeModule.registerHooks === "function") {
    const resolve = makeResolver()
    NodeModule.registerHooks({
      resolve: (specifier, context, nextResolve) => {
        const mine = resolve(specifier, context.parentURL)
        return mine === undefined ? nextResolve(specifier, context) : { url: mine.url, format: mine.format, shortCircuit: true }
      }
    })
    resolveHook = true
  }
  return { resolveHook, compileCache }
}
