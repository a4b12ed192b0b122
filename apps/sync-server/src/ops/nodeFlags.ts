/**
 * How to launch a server under the `compact` heap profile (@ocs/observability HeapProfile): `./ocs start`
 * and the sync-server's start script pass these, and so do the tests and benchmarks that
 * start servers. A server configured for another profile re-executes itself under it.
 */
import { launches } from "@ocs/observability/HeapProfile"

export const nodeFlags: ReadonlyArray<string> = launches.compact.flags

export const nodeEnv: Readonly<Record<string, string>> = launches.compact.env
