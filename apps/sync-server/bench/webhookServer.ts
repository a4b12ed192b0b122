/**
 * The sync server process the webhook benchmarks drive: started as `./ocs start` starts it,
 * one tenant, and no pulls (the API address is unreachable on purpose), so only webhooks flow.
 */
import { startServerProcess } from "../test/processes.ts"

export const APP = "7001"
export const BUSINESS = "8001"
export const TOKEN = "bench-verify-token"

export const startWebhookServer = (options: { readonly adminKey: string; readonly encryptionKey: string; readonly eventLog?: unknown }) =>
  startServerProcess({
    server: { host: "127.0.0.1", port: 0, adminKey: options.adminKey },
    dataDir: "data",
    eventLog: options.eventLog,
    api: { posBaseUrl: "http://127.0.0.1:9/pos", vpageBaseUrl: "http://127.0.0.1:9/vpage" },
    sync: { resources: [], intervalSeconds: 3600, reconcileSeconds: 86_400, overlapSeconds: 0 },
    webhooks: { silenceAlertSeconds: 86_400 },
    tenants: [{ appId: APP, verifyTokens: [TOKEN], businesses: [{ businessId: BUSINESS, accessToken: "unused" }] }]
  }, { OCS_ENCRYPTION_KEY: options.encryptionKey })
