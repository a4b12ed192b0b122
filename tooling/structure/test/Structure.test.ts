/**
 * The repository's boundaries, checked on the files themselves (see ../README.md).
 */
import { assert, describe, it } from "vitest"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const GROUPS = ["packages", "apps", "plugins", "tooling"] as const
/** Product code: what ships. Tooling is test infrastructure. */
const PRODUCT = new Set<string>(["packages", "apps", "plugins"])

interface Manifest {
  readonly name: string
  readonly dependencies?: Readonly<Record<string, string>>
}

interface Package {
  readonly name: string
  readonly group: string
  /** Relative to the repository root, with forward slashes. */
  readonly dir: string
  readonly manifest: Manifest
}

const rel = (file: string) => Path.relative(root, file).split(Path.sep).join("/")

const packages: ReadonlyArray<Package> = GROUPS.flatMap((group) =>
  Fs.readdirSync(Path.join(root, group)).flatMap((entry) => {
    const file = Path.join(root, group, entry, "package.json")
    if (!Fs.existsSync(file)) return []
    const manifest = JSON.parse(Fs.readFileSync(file, "utf8")) as Manifest
    return [{ name: manifest.name, group, dir: `${group}/${entry}`, manifest }]
  })
)
const byName = new Map(packages.map((p) => [p.name, p]))

const sourceFiles = (pkg: Package): ReadonlyArray<string> => {
  const src = Path.join(root, pkg.dir, "src")
  if (!Fs.existsSync(src)) return []
  return (Fs.readdirSync(src, { recursive: true }) as Array<string>)
    .filter((f) => /\.(ts|tsx|mts)$/.test(f) && !f.endsWith(".d.ts") && !f.endsWith(".test.ts"))
    .map((f) => Path.join(src, f))
}

/**
 * Module specifiers a file imports or re-exports, statically or dynamically (comments removed).
 * `values: true` leaves out `import type` / `export type`: erased by the compiler, they load no
 * module, so they cannot make a circle at run time (see the file check below).
 */
const importsOf = (text: string, options: { readonly values?: boolean } = {}): ReadonlyArray<string> => {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1")
  const found: Array<string> = []
  for (const m of code.matchAll(/(?:^|[\s;])(?:import|export)\s+(type\s+)?(?:[^"'`;]*?\s+from\s+)?["']([^"']+)["']/g)) {
    if (options.values !== true || m[1] === undefined) found.push(m[2]!)
  }
  for (const m of code.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) found.push(m[1]!)
  return found
}

const files = packages.flatMap((pkg) => sourceFiles(pkg).map((file) => ({ pkg, file, text: Fs.readFileSync(file, "utf8") })))

/** The package a specifier names: `@ocs/x/y` is `@ocs/x`, `effect/Schema` is `effect`. */
const packageOf = (specifier: string) => specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!

/** Every cycle of a directed graph, each as its list of nodes (Tarjan's strongly connected components). */
const cycles = (graph: ReadonlyMap<string, ReadonlySet<string>>): ReadonlyArray<ReadonlyArray<string>> => {
  let index = 0
  const indices = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const out: Array<Array<string>> = []
  const visit = (v: string) => {
    indices.set(v, index)
    low.set(v, index++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indices.get(w)!))
    }
    if (low.get(v) === indices.get(v)) {
      const component: Array<string> = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1 || graph.get(v)?.has(v) === true) out.push(component.sort())
    }
  }
  for (const v of graph.keys()) if (!indices.has(v)) visit(v)
  return out
}

const addEdge = (graph: Map<string, Set<string>>, from: string, to: string) => {
  graph.set(from, (graph.get(from) ?? new Set()).add(to))
  if (!graph.has(to)) graph.set(to, new Set())
}

describe("structure", () => {
  it("finds the workspace's packages and their sources", () => {
    assert.isAtLeast(packages.length, 10)
    assert.isTrue(byName.has("@ocs/event-log") && byName.has("@ocs/plugin-sdk"))
    assert.isAtLeast(files.length, 100)
  })

  it("has no import circle between packages", () => {
    const graph = new Map<string, Set<string>>()
    for (const pkg of packages) {
      graph.set(pkg.name, graph.get(pkg.name) ?? new Set())
      for (const dep of Object.keys(pkg.manifest.dependencies ?? {})) if (byName.has(dep)) addEdge(graph, pkg.name, dep)
    }
    for (const { pkg, text } of files) {
      for (const specifier of importsOf(text)) {
        const target = packageOf(specifier)
        if (byName.has(target) && target !== pkg.name) addEdge(graph, pkg.name, target)
      }
    }
    assert.deepStrictEqual(cycles(graph), [])
  })

  // Between files, the modules that load each other: a circle there decides which module runs
  // first and leaves the other half-initialised. A type-only import loads nothing (a package's
  // row types may name its tables while the tables' modules name the row types).
  it("has no import circle between the files of a package", () => {
    const graph = new Map<string, Set<string>>()
    for (const { file, text } of files) {
      graph.set(rel(file), graph.get(rel(file)) ?? new Set())
      for (const specifier of importsOf(text, { values: true })) {
        if (!specifier.startsWith(".")) continue
        addEdge(graph, rel(file), rel(Path.resolve(Path.dirname(file), specifier)))
      }
    }
    assert.deepStrictEqual(cycles(graph), [])
  })

  it("writes SQL against the event log's tables only inside @ocs/event-log", () => {
    const tablesFile = Fs.readFileSync(Path.join(root, "packages/event-log/src/Tables.ts"), "utf8")
    const tables = [...tablesFile.matchAll(/sqliteTable\(\s*"([a-z_]+)"/g)].map((m) => m[1]!)
    assert.includeMembers(tables, ["records", "relay_state", "dedupe_decisions"])
    const sql = new RegExp(`\\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\\s+["\`]?(?:${tables.join("|")})\\b`)
    const offenders = files
      .filter(({ pkg }) => PRODUCT.has(pkg.group) && pkg.name !== "@ocs/event-log")
      .filter(({ text }) => sql.test(text))
      .map(({ file }) => rel(file))
    assert.deepStrictEqual(offenders, [])
  })

  it("imports kafkajs only inside @ocs/event-log", () => {
    const offenders = files
      .filter(({ pkg }) => PRODUCT.has(pkg.group) && pkg.name !== "@ocs/event-log")
      .filter(({ text }) => importsOf(text).some((s) => packageOf(s) === "kafkajs"))
      .map(({ file }) => rel(file))
    assert.deepStrictEqual(offenders, [])
  })

  it("keeps SQLite and Kafka out of every plugin's production dependency tree", () => {
    /** The folder of an installed package, as Node would find it from `fromDir`. */
    const installed = (name: string, fromDir: string): string | undefined => {
      for (let dir = fromDir; ; dir = Path.dirname(dir)) {
        const candidate = Path.join(dir, "node_modules", name, "package.json")
        if (Fs.existsSync(candidate)) return Fs.realpathSync(Path.dirname(candidate))
        if (Path.dirname(dir) === dir) return undefined
      }
    }
    const plugins = packages.filter((p) => p.group === "plugins")
    assert.isNotEmpty(plugins)
    for (const plugin of plugins) {
      const seen = new Map<string, string>()
      const walk = (dir: string, path: ReadonlyArray<string>) => {
        const manifest = JSON.parse(Fs.readFileSync(Path.join(dir, "package.json"), "utf8")) as Manifest
        for (const dep of Object.keys(manifest.dependencies ?? {})) {
          const at = installed(dep, dir)
          assert.isDefined(at, `${[...path, dep].join(" > ")} is installed`)
          if (seen.has(at!)) continue
          seen.set(at!, [...path, dep].join(" > "))
          walk(at!, [...path, dep])
        }
      }
      walk(Path.join(root, plugin.dir), [plugin.name])
      const forbidden = [...seen.values()].filter((chain) => /(?:^| > )(?:better-sqlite3|kafkajs)$/.test(chain))
      assert.deepStrictEqual(forbidden, [], `${plugin.name}'s production dependencies`)
    }
  })
})
