/**
 * The console suite's browser: Debian's `chromium`, installed by the project's own script
 * (tooling/scripts/install-chromium.sh) when it is missing. Under CI=true a browser that
 * cannot be had fails the run; elsewhere the browser tests are skipped with the reason.
 */
import * as ChildProcess from "node:child_process"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"

const script = fileURLToPath(new URL("../../../../tooling/scripts/install-chromium.sh", import.meta.url))

declare module "vitest" {
  export interface ProvidedContext {
    /** Path of the Chromium executable; "" when none could be had (outside CI only). */
    chromium: string
    chromiumMissing: string
  }
}

export default function setup(project: TestProject) {
  const run = ChildProcess.spawnSync("sh", [script], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 600_000 })
  const path = run.status === 0 ? run.stdout.trim().split("\n").pop() ?? "" : ""
  if (path === "") {
    const why = `no Chromium: ${script} exited with ${run.status ?? run.error?.message}`
    if (process.env["CI"] === "true") throw new Error(why)
    console.warn(`console suite: ${why}; browser tests are skipped (they fail under CI=true)`)
    project.provide("chromium", "")
    project.provide("chromiumMissing", why)
    return
  }
  project.provide("chromium", path)
  project.provide("chromiumMissing", "")
}
