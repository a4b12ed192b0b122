/**
 * The operator console under `/ui` (docs/architecture.md §4.16): one HTML page, its script and
 * its style sheet (built from `console/src` and shipped in `console/assets`, no CDN), and the
 * sign-in that turns the admin key into a session cookie.
 *
 *   GET  /ui               the page (it routes by `#/...` on its own)
 *   GET  /ui/app.js        the bundle; GET /ui/app.css the styles
 *   GET  /ui/session       { signedIn, csrf } for the cookie's session
 *   POST /ui/session       { key } -> session cookie and its CSRF token (429 after too
 *                          many wrong keys in a minute)
 *   POST /ui/session/end   sign out (same origin and CSRF token required)
 *
 * The page's data comes from the JSON admin API, which accepts the session cookie for reads
 * and, with the CSRF token and from the same origin, for actions (admin/AdminHttp.ts).
 */
import { Clock, Effect, Redacted } from "effect"
import { type HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import { type AdminOptions, body, clientAddress, json, problem, sameOrigin } from "../admin/AdminHttp.ts"
import { SignIn } from "@ocs/admin-api/AdminInputs"
import { safeEqual } from "@ocs/tenant-store/Secrets"
import type { Sessions } from "./Sessions.ts"

const assetsDir = fileURLToPath(new URL("../../../console/assets/", import.meta.url))

/** No inline script or style: the page runs only what this server sends. */
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store"
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ocs console</title>
<link rel="stylesheet" href="/ui/app.css">
<script type="module" src="/ui/app.js"></script>
</head>
<body>
<div id="app"><noscript>The console needs JavaScript.</noscript></div>
</body>
</html>
`

/** An asset read once at start; a missing file is answered 500 with how to build it. */
const asset = (name: string, contentType: string) => {
  let text: string | undefined
  try {
    text = Fs.readFileSync(assetsDir + name, "utf8")
  } catch {
    text = undefined
  }
  return Effect.sync(() =>
    text === undefined
      ? problem(500, `console asset ${name} is missing: run ./ocs --filter @ocs/sync-server build:console`)
      : HttpServerResponse.text(text, { contentType, headers: { ...SECURITY_HEADERS, "cache-control": "no-cache" } })
  )
}

export const add = (router: HttpRouter.HttpRouter, options: AdminOptions & { readonly sessions: Sessions }) =>
  Effect.gen(function*() {
    const sessions = options.sessions
    yield* router.add("GET", "/ui", Effect.succeed(HttpServerResponse.text(PAGE, { contentType: "text/html; charset=utf-8", headers: SECURITY_HEADERS })))
    yield* router.add("GET", "/ui/app.js", asset("app.js", "text/javascript; charset=utf-8"))
    yield* router.add("GET", "/ui/app.css", asset("app.css", "text/css; charset=utf-8"))

    yield* router.add(
      "GET",
      "/ui/session",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const s = sessions.fromCookie(request.headers["cookie"], yield* Clock.currentTimeMillis)
        return json(s === undefined ? { signedIn: false } : { signedIn: true, csrf: s.csrf, idleTimeoutMs: sessions.ttlMs })
      })
    )
    yield* router.add(
      "POST",
      "/ui/session",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        // A page elsewhere must not sign a browser in with a key of its choosing.
        if (!sameOrigin(request)) return problem(403, "cross-origin request refused")
        const at = yield* Clock.currentTimeMillis
        const source = clientAddress(request)
        if (sessions.signInBlocked(source, at)) return problem(429, "too many wrong keys in the last minute: wait, then sign in again")
        const input = yield* body(SignIn, 4096)
        const ok = options.adminKey !== undefined && safeEqual(input.key, Redacted.value(options.adminKey))
        if (!ok) {
          sessions.failedSignIn(source, at)
          yield* Effect.logWarning("console: sign-in refused (wrong admin key)")
          return problem(401, options.adminKey === undefined ? "the server has no admin key configured (server.adminKey)" : "wrong admin key")
        }
        const s = sessions.create(at)
        return HttpServerResponse.setHeader(json({ signedIn: true, csrf: s.csrf, idleTimeoutMs: sessions.ttlMs }), "set-cookie", sessions.cookie(s))
      }).pipe(Effect.catch((e: unknown) => Effect.succeed(HttpServerResponse.isHttpServerResponse(e) ? e : problem(400, "bad sign-in request"))))
    )
    yield* router.add(
      "POST",
      "/ui/session/end",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const s = sessions.fromCookie(request.headers["cookie"], yield* Clock.currentTimeMillis)
        if (s === undefined) return problem(401, "not signed in")
        if (!sameOrigin(request)) return problem(403, "cross-origin request refused")
        if (!sessions.csrfValid(s, request.headers["x-csrf-token"])) return problem(403, "missing or wrong CSRF token (x-csrf-token)")
        sessions.end(s.id)
        return HttpServerResponse.setHeader(json({ signedIn: false }), "set-cookie", sessions.cookie(undefined))
      })
    )
  })
