import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"
import { definePlugin, Plugin, SDK_VERSION, Version } from "@ocs/plugin-sdk"
import { PluginLoader, PluginRuntime } from "@ocs/plugin-runtime"
import { files, runtimeLayer } from "./helpers.ts"

const here = NodePath.dirname(NodeUrl.fileURLToPath(import.meta.url))
const repo = NodePath.resolve(here, "../../..")

describe("PluginLoader", () => {
  it.effect("loads a plugin by path, relative to the base dir", () =>
    Effect.gen(function*() {
      const plugin = yield* PluginLoader.load("./fixtures/hello-plugin.ts", { baseDir: here })
      assert.strictEqual(plugin.name, "hello")
      assert.deepStrictEqual(plugin.subscribes, ["OrderAdded"])
    }))

  it.effect("loads a plugin by package name, resolved from the base dir's node_modules", () =>
    Effect.gen(function*() {
      const base = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "plugin-pkg-"))
      NodeFs.mkdirSync(NodePath.join(base, "node_modules", "@ocs"), { recursive: true })
      NodeFs.symlinkSync(NodePath.join(repo, "plugins", "low-stock-alert"), NodePath.join(base, "node_modules", "@ocs", "plugin-low-stock-alert"), "dir")
      const [installed] = yield* PluginLoader.loadAll(
        [{ use: "@ocs/plugin-low-stock-alert", config: { webhookUrl: "http://127.0.0.1:1/", defaultThreshold: 3 } }, { use: "./nope.ts", enabled: false }],
        { baseDir: base }
      )
      assert.strictEqual(installed!.plugin.name, "low-stock-alert")
      assert.deepStrictEqual(installed!.config, { webhookUrl: "http://127.0.0.1:1/", defaultThreshold: 3 })
      const missing = yield* Effect.flip(PluginLoader.load("@ocs/plugin-does-not-exist", { baseDir: base }))
      assert.strictEqual(missing._tag, "PluginLoadError")
      assert.include(missing.message, "cannot resolve")
    }))

  it.effect("refuses a plugin whose sdkVersion range excludes this SDK, with a typed error", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(PluginLoader.load("./fixtures/future-plugin.ts", { baseDir: here }))
      assert.strictEqual(error._tag, "SdkVersionMismatch")
      if (error._tag !== "SdkVersionMismatch") return
      assert.strictEqual(error.required, "^99.0.0")
      assert.strictEqual(error.sdkVersion, SDK_VERSION)
      assert.include(error.message, "requires @ocs/plugin-sdk ^99.0.0")
    }))

  it.effect("a module without a plugin as default export is refused", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(PluginLoader.load("./fixtures/not-a-plugin.ts", { baseDir: here }))
      assert.strictEqual(error._tag, "PluginLoadError")
      assert.include(error.message, "default export")
    }))

  it.live("the runtime built from config refuses a bad plugin config at start", () =>
    Effect.gen(function*() {
      const f = files()
      const layer = PluginRuntime.PluginRuntime.layerFromConfig({ filename: f.plugins, baseDir: here, plugins: [{ use: "./fixtures/hello-plugin.ts", config: { greeting: 42 } }] })
      const error = yield* Effect.flip(Effect.scoped(Effect.provide(Effect.void, Layer.provideMerge(layer, runtimeLayer(f, { plugins: [] })))))
      assert.strictEqual((error as { _tag: string })._tag, "InvalidPluginConfig")
    }))

  it("semver ranges", () => {
    const cases: Array<[string, string, boolean]> = [
      ["0.0.0", "0.x", true],
      ["1.2.3", "^1.0.0", true],
      ["2.0.0", "^1.0.0", false],
      ["0.2.5", "^0.2.1", true],
      ["0.3.0", "^0.2.1", false],
      ["1.2.9", "~1.2.3", true],
      ["1.3.0", "~1.2.3", false],
      ["1.5.0", ">=1.2.0 <2", true],
      ["2.0.0", ">=1.2.0 <2", false],
      ["3.1.0", "^1 || ^3", true],
      ["1.0.0", "*", true],
      ["1.0.0", "", true],
      ["1.4.0", "1.2.0 - 1.4.0", true],
      ["1.4.1", "1.2.0 - 1.4.0", false],
      ["1.4.9", "1.2 - 1.4", true],
      ["1.5.0", "1.2 - 1.4", false],
      // x-ranges and partial versions
      ["1.9.9", "1.x", true],
      ["2.0.0", "1.x", false],
      ["1.2.7", "1.2.*", true],
      ["1.3.0", "1.2.*", false],
      ["1.0.0", "1", true],
      ["1.2.0", "~1.2", true],
      ["1.3.0", "~1.2", false],
      ["1.3.0", ">1.2", true],
      ["1.2.9", ">1.2", false],
      ["1.2.9", "<=1.2", true],
      ["1.3.0", "<=1.2", false],
      ["0.0.3", "^0.0.3", true],
      ["0.0.4", "^0.0.3", false],
      ["1.2.3", ">= 1.2.3", true],
      ["1.2.3", "=1.2.3", true],
      ["1.2.4", "1.2.3", false],
      // A pre-release counts by its precedence: it comes before its release.
      ["0.2.0-next.1", "0.x", true],
      ["0.2.0-next.1", "<0.2.0", true],
      ["1.0.0-rc.1", "^1.0.0", false],
      ["1.0.0-rc.2", "^1.0.0-rc.1", true],
      ["1.0.0-rc.1", "~1", true]
    ]
    for (const [v, r, expected] of cases) assert.strictEqual(Version.satisfies(v, r), expected, `${v} in ${r}`)
    // Not a range, or not a version (strict semver: no "v", no build metadata in a range,
    // no leading zeros, no empty alternative).
    for (const r of ["banana", "^v1.0.0", "1.2.3+build", "01.2.3", "^1 ||", ">=1.2.3.4"]) {
      assert.isUndefined(Version.satisfies("1.2.3", r), r)
    }
    assert.isUndefined(Version.satisfies("v1.2.3", "^1.0.0"))
  })

  it.effect("checkSdkVersion: a pre-release SDK loads plugins whose range covers it; a malformed range is refused", () =>
    Effect.gen(function*() {
      const plugin = (sdkVersion: string) =>
        definePlugin({ name: "p", version: "1.0.0", sdkVersion, subscribes: ["OrderAdded"], handle: () => Effect.void })
      yield* Plugin.checkSdkVersion(plugin("0.x"), "0.2.0-next.1")
      yield* Plugin.checkSdkVersion(definePlugin({ name: "any", version: "1.0.0", subscribes: ["OrderAdded"], handle: () => Effect.void }), "0.2.0")
      const excluded = yield* Effect.flip(Plugin.checkSdkVersion(plugin("^1.0.0"), "1.0.0-rc.1"))
      assert.strictEqual(excluded._tag, "SdkVersionMismatch")
      assert.include(excluded.message, "requires @ocs/plugin-sdk ^1.0.0, but this is 1.0.0-rc.1")
      const malformed = yield* Effect.flip(Plugin.checkSdkVersion(plugin("^v0.1.0"), "0.1.0"))
      assert.strictEqual(malformed.required, "^v0.1.0")
      assert.include(malformed.message, "is not a semver range")
    }))
})
