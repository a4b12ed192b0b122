/** Moved to @ocs/tenant-store; re-exported here while http/Server.ts imports it from this path. */
export * from "@ocs/tenant-store/SharedRateLimits"
