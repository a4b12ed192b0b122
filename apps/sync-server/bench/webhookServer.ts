/**
 * The sync server process the webhook benchmarks drive: started as `./ocs start` starts it,
 * one tenant, and no pulls (the API address is unreachable on purpose), so only webhooks flow.
 */
import Database from "better-sqlite3"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { files } from "../src/http/Server.ts"
import { startServerProcess } from "../test/processes.ts"

export const APP = "7001"
export const BUSINESS = "8001"
export const TOKEN = "bench-verify-token"

export const startWebhookServer = (options: {
  readonly adminKey: string
  readonly encryptionKey: string
  readonly eventLog?: unknown
  readonly tracing?: unknown
  /** Default `data` beside the configuration file. */
  readonly dataDir?: string
  readonly storeTimeoutSeconds?: number
  readonly sqlite?: unknown
}) =>
  startServerProcess({
    tracing: options.tracing,
    server: { host: "127.0.0.1", port: 0, adminKey: options.adminKey },
    dataDir: options.dataDir ?? "data",
    eventLog: options.eventLog,
    sqlite: options.sqlite,
    api: { posBaseUrl: "http://127.0.0.1:9/pos", vpageBaseUrl: "http://127.0.0.1:9/vpage" },
    sync: { resources: [], intervalSeconds: 3600, reconcileSeconds: 86_400, overlapSeconds: 0 },
    webhooks: { silenceAlertSeconds: 86_400, storeTimeoutSeconds: options.storeTimeoutSeconds },
    tenants: [{ appId: APP, verifyTokens: [TOKEN], businesses: [{ businessId: BUSINESS, accessToken: "unused" }] }]
  }, { OCS_ENCRYPTION_KEY: options.encryptionKey })

/** utime + stime of a process (every thread), in microseconds (from /proc, clock ticks of 10 ms). */
export const cpuMicrosOf = (pid: number): number => {
  const stat = Fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  // Fields after the command name (which may contain spaces) start after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

/** Write system calls the process (every thread) has made, from /proc/<pid>/io; 0 where unreadable. */
export const writeCallsOf = (pid: number): number => {
  try {
    return Number(/^syscw: (\d+)$/m.exec(Fs.readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? 0)
  } catch {
    return 0
  }
}

/**
 * Stops the server gracefully (a non-zero exit fails the bench, with its output) and counts
 * the webhooks its event log holds, read from the file it left behind.
 */
export const stopAndCountStored = async (server: Awaited<ReturnType<typeof startWebhookServer>>): Promise<number> => {
  const exitCode = await server.proc.stop("SIGTERM")
  if (exitCode !== 0) throw new Error(`server exited with ${exitCode}\n${server.proc.output().slice(-3000)}`)
  const db = new Database(files(Path.join(server.dir, "data")).events, { readonly: true })
  try {
    return (db.prepare("SELECT count(*) AS n FROM records WHERE source = 'webhook'").get() as { n: number }).n
  } finally {
    db.close()
  }
}
