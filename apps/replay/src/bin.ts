#!/usr/bin/env node
/**
 * `ocs-replay` (`./ocs replay <command>`): the replay and audit tool. See README.md.
 *
 * Exit codes: 0 ok, 1 `verify` found differences, 2 usage or input error, 3 other failure.
 *
 * This file only launches: the faster module loading of `@ocs/observability/FastStart` first,
 * then the program (`main.ts`), which has to be loaded after it (docs/architecture.md §4.36).
 */
import { install } from "@ocs/observability/FastStart"

install()
await import("./main.ts")
