/** A simulator in its own process for the benchmarks (so the load generator does not share its thread). */
import { spawn } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const here = Path.dirname(fileURLToPath(import.meta.url))

export const startServer = (products: number) =>
  new Promise<{ readonly url: string; readonly stop: () => void }>((resolve, reject) => {
    const child = spawn(process.execPath, [
      Path.join(here, "..", "src", "bin.ts"),
      "--port",
      "0",
      "--products",
      String(products),
      "--no-rate-limit"
    ], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(out)
      if (match !== null) resolve({ url: match[1]!, stop: () => child.kill("SIGINT") })
    })
    child.once("exit", (code) => reject(new Error(`simulator exited with ${code}: ${out}`)))
  })

