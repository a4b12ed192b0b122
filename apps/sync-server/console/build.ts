/**
 * Builds the console's assets (`console/assets/app.js`, `app.css`) from `console/src` with
 * esbuild: `./ocs --filter @ocs/sync-server build:console`. The assets are committed and
 * shipped with the package, so the server needs no build step and no network to serve them;
 * the console suite checks that they match a fresh build.
 */
import * as esbuild from "esbuild"
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url))

/** The bundle and the style sheet as a build makes them now. */
export const build = async (): Promise<{ readonly js: string; readonly css: string }> => {
  const result = await esbuild.build({
    entryPoints: [here("./src/main.ts")],
    bundle: true,
    format: "esm",
    target: "es2022",
    minify: true,
    legalComments: "eof",
    write: false,
    logLevel: "silent"
  })
  return { js: result.outputFiles[0]!.text, css: Fs.readFileSync(here("./src/app.css"), "utf8") }
}

export const assetsDir = here("./assets/")

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { js, css } = await build()
  Fs.mkdirSync(assetsDir, { recursive: true })
  Fs.writeFileSync(assetsDir + "app.js", js)
  Fs.writeFileSync(assetsDir + "app.css", css)
  console.log(`console assets: app.js ${js.length} bytes, app.css ${css.length} bytes`)
}
