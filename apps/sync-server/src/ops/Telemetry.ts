/** Moved to @ocs/observability; re-exported here while http/Server.ts imports it from this path. */
export * from "@ocs/observability/Telemetry"
