#!/usr/bin/env node
/**
 * `ocs-simulator` (`./ocs simulator`): serves the simulator with a demo app, business and
 * token, prints them, and runs until interrupted. `GET /_sim/demo` returns the same JSON.
 *
 * This file only launches: Node's compile cache first (a second start compiles nothing it
 * compiled before: about 40 % less CPU to start), then the program (`main.ts`), which has to be
 * loaded after it. `NODE_DISABLE_COMPILE_CACHE=1` turns the cache off.
 */
import * as NodeModule from "node:module"

if (process.env["NODE_DISABLE_COMPILE_CACHE"] === undefined) NodeModule.enableCompileCache?.()
await import("./main.ts")
