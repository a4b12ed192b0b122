/**
 * The console's sessions (docs/architecture.md §4.16): signing in with the admin key gives a
 * random session id, sent back only as an HttpOnly, SameSite=Strict cookie, and a CSRF token
 * of its own that every state-changing request must repeat in `x-csrf-token`.
 *
 * Sessions live in memory: a restart signs everyone out, which is what an operator expects of
 * a key rotation too. They expire after `ttlMs` without use and at most `maxAgeMs` after
 * sign-in; at most `maxSessions` live at once (the oldest is dropped), so a flood of sign-ins
 * cannot grow memory.
 */
import * as Crypto from "node:crypto"
import { safeEqual } from "../../tenants/Secrets.ts"
import * as SourceThrottle from "../SourceThrottle.ts"

/** The cookie's name; under TLS the `__Host-` prefix makes browsers insist on Secure, Path=/ and no Domain. */
export const cookieName = (secure: boolean) => (secure ? "__Host-ocs_session" : "ocs_session")

export interface Session {
  readonly id: string
  readonly csrf: string
  readonly createdAt: number
  lastUsedAt: number
}

export interface SessionOptions {
  /** Idle time after which a session ends (default 30 minutes). */
  readonly ttlMs?: number | undefined
  /** Longest life of a session, used or not (default 12 hours). */
  readonly maxAgeMs?: number | undefined
  readonly maxSessions?: number | undefined
  /** Wrong keys allowed per minute from one address before its sign-in is refused for the rest of it (default 20). */
  readonly maxFailuresPerMinute?: number | undefined
  /** Cookies get `Secure` (the server speaks TLS). */
  readonly secure: boolean
}

export interface Sessions {
  readonly secure: boolean
  readonly ttlMs: number
  /** A new session; the caller has checked the key. */
  readonly create: (now: number) => Session
  /** The live session named by the request's cookie header, refreshed; undefined otherwise. */
  readonly fromCookie: (cookieHeader: string | undefined, now: number) => Session | undefined
  readonly end: (id: string) => void
  /** Whether the session is still live (not ended, not expired), without counting as a use. */
  readonly alive: (id: string, now: number) => boolean
  /** The `Set-Cookie` value that gives (or, with `undefined`, clears) the session cookie. */
  readonly cookie: (session: Session | undefined) => string
  /** Constant-time check of a request's CSRF header against the session's token. */
  readonly csrfValid: (session: Session, header: string | undefined) => boolean
  /**
   * Counts a wrong key from `source` (the client address). Past `maxFailuresPerMinute` in the
   * last minute, `signInBlocked` holds for that source until its oldest failure is a minute
   * old: guessing the key from a browser stays slow, and nobody else is locked out.
   */
  readonly failedSignIn: (source: string, now: number) => void
  readonly signInBlocked: (source: string, now: number) => boolean
  readonly size: () => number
}

const token = () => Crypto.randomBytes(32).toString("base64url")

/** The value of cookie `name` in a `Cookie` header. */
export const cookieValue = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const part of header.split(";")) {
    const eq = part.indexOf("=")
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

export const make = (options: SessionOptions): Sessions => {
  const ttlMs = options.ttlMs ?? 30 * 60_000
  const maxAgeMs = options.maxAgeMs ?? 12 * 3600_000
  const maxSessions = options.maxSessions ?? 1000
  const maxFailures = options.maxFailuresPerMinute ?? 20
  const name = cookieName(options.secure)
  const failures = SourceThrottle.make({ limit: maxFailures, windowMs: 60_000 })
  // Insertion order is sign-in order: the first entry is the oldest session.
  const live = new Map<string, Session>()
  const expired = (s: Session, now: number) => now - s.lastUsedAt > ttlMs || now - s.createdAt > maxAgeMs
  const sweep = (now: number) => {
    for (const [id, s] of live) if (expired(s, now)) live.delete(id)
  }
  return {
    secure: options.secure,
    ttlMs,
    create: (now) => {
      sweep(now)
      while (live.size >= maxSessions) live.delete(live.keys().next().value!)
      const s: Session = { id: token(), csrf: token(), createdAt: now, lastUsedAt: now }
      live.set(s.id, s)
      return s
    },
    fromCookie: (header, now) => {
      const id = cookieValue(header, name)
      if (id === undefined || id.length > 100) return undefined
      const s = live.get(id)
      if (s === undefined) return undefined
      if (expired(s, now)) {
        live.delete(id)
        return undefined
      }
      s.lastUsedAt = now
      return s
    },
    end: (id) => void live.delete(id),
    alive: (id, now) => {
      const s = live.get(id)
      return s !== undefined && !expired(s, now)
    },
    cookie: (s) =>
      [
        `${name}=${s === undefined ? "" : s.id}`,
        "Path=/",
        "HttpOnly",
        "SameSite=Strict",
        ...(options.secure ? ["Secure"] : []),
        `Max-Age=${s === undefined ? 0 : Math.floor(maxAgeMs / 1000)}`
      ].join("; "),
    csrfValid: (s, header) => typeof header === "string" && header.length > 0 && safeEqual(header, s.csrf),
    failedSignIn: failures.failed,
    signInBlocked: (source, now) => failures.blockedFor(source, now) > 0,
    size: () => live.size
  }
}
