/**
 * `./ocs pack [folder]`: the plugin SDK as tarballs that a plugin outside this repository
 * installs from, with no registry (default folder: dist/sdk).
 *
 * Writes `ocs-plugin-sdk-<v>.tgz`, `ocs-protocol-<v>.tgz` (compiled to JavaScript with their
 * declarations, `exports` as published) and `effect-<v>.tgz` (the copy this checkout runs, so
 * the plugin and the server agree on its version). A plugin's package.json lists the three as
 * `file:` dependencies and pins the SDK's own dependencies to them (packages/plugin-sdk/README.md,
 * "A plugin in its own folder"). The SDK needs nothing else: no database driver, no Kafka client.
 */
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "../..")
const out = Path.resolve(process.argv[2] ?? Path.join(root, "dist", "sdk"))
const require = createRequire(Path.join(root, "packages", "plugin-sdk", "package.json"))

interface Manifest {
  readonly name: string
  readonly version: string
  readonly description?: string
  readonly license?: string
  readonly dependencies?: Readonly<Record<string, string>>
  readonly publishConfig?: { readonly exports?: unknown }
}

const readJson = (file: string) => JSON.parse(Fs.readFileSync(file, "utf8")) as Manifest
const run = (command: string, args: ReadonlyArray<string>) => ChildProcess.execFileSync(command, args, { stdio: ["ignore", "inherit", "inherit"] })
const tarballName = (name: string, version: string) => `${name.replace(/^@/, "").replace("/", "-")}-${version}.tgz`

/** Tars `dir` (which holds `package/`) into the output folder, as npm and pnpm expect a tarball. */
const tar = (dir: string, name: string, version: string) => {
  const file = Path.join(out, tarballName(name, version))
  run("tar", ["-czf", file, "-C", dir, "package"])
  return file
}

const workspaceVersions = new Map<string, string>()
for (const group of ["packages"]) {
  for (const entry of Fs.readdirSync(Path.join(root, group))) {
    const file = Path.join(root, group, entry, "package.json")
    if (Fs.existsSync(file)) {
      const m = readJson(file)
      workspaceVersions.set(m.name, m.version)
    }
  }
}

/** A workspace package compiled to dist/, with the manifest it would be published with. */
const packWorkspace = (dir: string) => {
  const source = Path.join(root, dir)
  const manifest = readJson(Path.join(source, "package.json"))
  const staging = Fs.mkdtempSync(Path.join(Os.tmpdir(), "ocs-pack-"))
  try {
    const pkg = Path.join(staging, "package")
    run(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", Path.join(source, "tsconfig.build.json"), "--outDir", Path.join(pkg, "dist")])
    const dependencies = Object.fromEntries(Object.entries(manifest.dependencies ?? {}).map(([name, range]) => {
      if (!range.startsWith("workspace:")) return [name, range]
      const version = workspaceVersions.get(name)
      if (version === undefined) throw new Error(`${manifest.name} depends on ${name}, which is not in packages/`)
      return [name, version]
    }))
    Fs.writeFileSync(Path.join(pkg, "package.json"), `${JSON.stringify({
      name: manifest.name,
      version: manifest.version,
      description: manifest.description,
      type: "module",
      license: manifest.license,
      exports: manifest.publishConfig?.exports,
      files: ["dist", "README.md"],
      dependencies
    }, null, 2)}\n`)
    if (Fs.existsSync(Path.join(source, "README.md"))) Fs.copyFileSync(Path.join(source, "README.md"), Path.join(pkg, "README.md"))
    return tar(staging, manifest.name, manifest.version)
  } finally {
    Fs.rmSync(staging, { recursive: true, force: true })
  }
}

/** A third-party package as installed here (its published files), without sources and maps. */
const packInstalled = (name: string) => {
  const dir = Path.dirname(require.resolve(`${name}/package.json`))
  const manifest = readJson(Path.join(dir, "package.json"))
  const staging = Fs.mkdtempSync(Path.join(Os.tmpdir(), "ocs-pack-"))
  try {
    Fs.cpSync(dir, Path.join(staging, "package"), {
      recursive: true,
      filter: (from) => !from.endsWith(".map") && Path.relative(dir, from).split(Path.sep)[0] !== "node_modules" && Path.relative(dir, from) !== "src"
    })
    return tar(staging, manifest.name, manifest.version)
  } finally {
    Fs.rmSync(staging, { recursive: true, force: true })
  }
}

Fs.mkdirSync(out, { recursive: true })
const written = [packWorkspace("packages/protocol"), packWorkspace("packages/plugin-sdk"), packInstalled("effect")]
for (const file of written) process.stdout.write(`${file}\n`)
