#!/usr/bin/env node
/**
 * `ocs-sync-server` (`./ocs start`); its flags are in `main.ts` (`--help` lists them).
 *
 * This file only launches: the faster module loading of `@ocs/observability/FastStart` first,
 * then the program (`main.ts`), which has to be loaded after it (docs/architecture.md §4.36).
 */
import { install } from "@ocs/observability/FastStart"

install()
await import("./main.ts")
