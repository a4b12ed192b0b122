/**
 * Node flags the server runs with (`./ocs start` and the sync-server's start script pass
 * them). A server with a thousand idle tenants holds about 65 MB of live heap, but V8's
 * default young generation and growth policy keep several hundred MB resident after the
 * first sync burst; these flags trade a little throughput for a resident size that follows
 * the live heap (measured: 403 MB -> 194 MB with 500 tenants).
 */
export const nodeFlags: ReadonlyArray<string> = ["--optimize-for-size", "--max-semi-space-size=2"]
