/**
 * How the console talks to the server: the JSON admin API with the session cookie (and the
 * CSRF token on actions), and the live snapshot stream (`/admin/stream`, server-sent events).
 */

let csrf: string | undefined
let onSignedOut: () => void = () => {}

export const setSession = (token: string | undefined, signedOut?: () => void) => {
  csrf = token
  if (signedOut !== undefined) onSignedOut = signedOut
}

export class ApiError extends Error {
  readonly status: number
  /** The answer's JSON body, when it had one (field issues, the command a key belongs to). */
  readonly body: any
  constructor(status: number, message: string, body?: unknown) {
    super(message)
    this.status = status
    this.body = body ?? null
  }
}

/** A call of the admin API; 401 signs the console out, any other failure throws its message. */
export const api = async <A = any>(path: string, method: "GET" | "POST" = "GET", body?: unknown, extra?: Record<string, string>): Promise<A> => {
  const headers: Record<string, string> = { accept: "application/json", ...extra }
  if (method !== "GET" && csrf !== undefined) headers["x-csrf-token"] = csrf
  if (body !== undefined) headers["content-type"] = "application/json"
  let r: Response
  try {
    r = await fetch(path, { method, headers, credentials: "same-origin", ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  } catch {
    throw new ApiError(0, "the server does not answer")
  }
  const text = await r.text()
  let parsed: any
  try {
    parsed = text === "" ? null : JSON.parse(text)
  } catch {
    parsed = null
  }
  if (r.status === 401 && !path.startsWith("/ui/session")) onSignedOut()
  if (!r.ok) throw new ApiError(r.status, parsed?.error ?? `${r.status} ${r.statusText}`, parsed)
  return parsed as A
}

export interface Snapshot {
  readonly at: number
  readonly tenants: {
    readonly total: number
    readonly byStatus: { readonly active: number; readonly paused: number; readonly attention: number }
    readonly list: ReadonlyArray<Tenant>
  }
  readonly webhooks: { readonly received: number; readonly accepted: number; readonly duplicates: number; readonly rejected: Record<string, number> }
  readonly sync: { readonly runs: number; readonly pages: number; readonly records: number }
  readonly keys: { readonly total: number; readonly locked: number; readonly list: ReadonlyArray<Key> }
  readonly loops: ReadonlyArray<{ readonly name: string; readonly up: boolean; readonly restarts: number; readonly lastError: string | null; readonly since: number }>
  readonly errors: ReadonlyArray<{ readonly at: number; readonly appId: string; readonly businessId: string | null; readonly resource: string | null; readonly tag: string; readonly message: string }>
  readonly plugins: ReadonlyArray<Plugin>
}

export interface Tenant {
  readonly appId: string
  readonly businessId: string
  readonly status: "active" | "paused" | "attention"
  readonly attention: { readonly code: string; readonly message: string; readonly at: number } | null
  readonly expiresAt: number | null
  readonly expiresInDays: number | null
  readonly lastWebhookAt: number | null
  readonly webhookSilent: boolean | null
  readonly sync?: { readonly resources: number; readonly complete: number; readonly pages: number; readonly records: number; readonly lastRunAt: number | null; readonly errors: number } | null
}

export interface Key {
  readonly key: string
  readonly limit: number
  readonly windowMs: number
  readonly calls: number
  readonly locks: number
  readonly queueDepth: number
  readonly inFlight: number
  readonly lockedUntil?: number | undefined
  readonly recentCalls: number
}

export interface Plugin {
  readonly name: string
  readonly version: string
  readonly status: string
  readonly handled: number
  readonly failures: number
  readonly deadLettered: number
  readonly deadLetters: number
  readonly lag: number | null
}

export type Live =
  | { readonly state: "connecting" }
  | { readonly state: "live"; readonly snapshot: Snapshot; readonly previous: Snapshot | undefined; readonly skewMs: number }
  | { readonly state: "lost"; readonly snapshot: Snapshot | undefined }

/** Follows `/admin/stream`; the browser's EventSource reconnects by itself after a drop. */
export const follow = (update: (live: Live) => void): (() => void) => {
  const source = new EventSource("/admin/stream")
  let last: Snapshot | undefined
  source.addEventListener("snapshot", (e) => {
    const snapshot = JSON.parse((e as MessageEvent<string>).data) as Snapshot
    update({ state: "live", snapshot, previous: last, skewMs: snapshot.at - Date.now() })
    last = snapshot
  })
  source.addEventListener("error", () => {
    update({ state: "lost", snapshot: last })
    // A closed stream after a 401 (session ended): the session check decides what to show.
    if (source.readyState === EventSource.CLOSED) void api("/ui/session").then((s) => s.signedIn ? undefined : onSignedOut(), () => {})
  })
  return () => source.close()
}

// formatting -----------------------------------------------------------------------------

export const time = (ms: number | null | undefined) => (ms === null || ms === undefined ? "never" : new Date(ms).toLocaleString())

export const ago = (ms: number | null | undefined, now = Date.now()) => {
  if (ms === null || ms === undefined) return "never"
  const s = Math.max(0, Math.round((now - ms) / 1000))
  if (s < 60) return `${s} s ago`
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`
  return `${Math.floor(s / 86400)} d ago`
}

export const rate = (now: Snapshot, before: Snapshot | undefined, pick: (s: Snapshot) => number) => {
  if (before === undefined || now.at <= before.at) return "–"
  const r = ((pick(now) - pick(before)) * 1000) / (now.at - before.at)
  return r < 10 ? r.toFixed(1) : String(Math.round(r))
}

export const tenantPath = (t: { readonly appId: string; readonly businessId: string }) => `#/tenants/${t.appId}/${t.businessId}`

/** What an operator can do about a tenant that needs attention, by its code. */
export const advice = (code: string): string => {
  switch (code) {
    case "InvalidAccessToken":
    case "ERR_INVALID_ACCESS_TOKEN":
      return "The access token was refused (expired or revoked). Send the business its application's connect link (the message has it; see Connect), or register a new token with POST /admin/tenants and resume."
    case "APP_UNINSTALLED":
      return "The business removed the application. Nothing is pulled until it installs it again; then register its new token and resume."
    case "BusinessNotEnableApi":
      return "The business has not enabled the API. Ask it to enable the Open API in its settings, then resume."
    case "InvalidVersion":
      return "The API version of this tenant is refused. Correct its version with POST /admin/tenants, then resume."
    case "InvalidBusinessId":
    case "InvalidAppId":
      return "The service does not know this application or business. Check the ids registered for it; remove the tenant if it is gone."
    default:
      return "Read the message, correct the cause, then resume the tenant."
  }
}
