/**
 * @ocs/testkit (private): what the test and benchmark suites of several packages share, so
 * none reaches into another's test folder. `Processes`: the real programs as child processes;
 * `EventMix`: the deterministic event mix of the benchmarks.
 */
export * as EventMix from "./EventMix.ts"
export * as Processes from "./Processes.ts"
