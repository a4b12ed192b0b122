import { assert, describe, it } from "vitest"
import * as Sessions from "../src/http/console/Sessions.ts"

const MIN = 60_000

describe("console sessions", () => {
  it("finds a session by its cookie, refreshes it on use, and ends it when idle too long", () => {
    const sessions = Sessions.make({ secure: false, ttlMs: 10 * MIN })
    const s = sessions.create(0)
    const header = `other=1; ocs_session=${s.id}`
    assert.strictEqual(sessions.fromCookie(header, 9 * MIN)?.id, s.id)
    // Used at 9 min: alive until 19 min.
    assert.strictEqual(sessions.fromCookie(header, 18 * MIN)?.id, s.id)
    assert.strictEqual(sessions.fromCookie(header, 28 * MIN + 1), undefined)
    assert.strictEqual(sessions.size(), 0, "an expired session is forgotten")
  })

  it("ends a session at its maximum age even when it is used", () => {
    const sessions = Sessions.make({ secure: false, ttlMs: 10 * MIN, maxAgeMs: 30 * MIN })
    const s = sessions.create(0)
    for (let t = 5; t <= 30; t += 5) assert.ok(sessions.fromCookie(`ocs_session=${s.id}`, t * MIN))
    assert.strictEqual(sessions.fromCookie(`ocs_session=${s.id}`, 30 * MIN + 1), undefined)
  })

  it("refuses unknown ids, signs out, and drops the oldest session past the bound", () => {
    const sessions = Sessions.make({ secure: false, maxSessions: 2 })
    assert.strictEqual(sessions.fromCookie("ocs_session=made-up", 0), undefined)
    assert.strictEqual(sessions.fromCookie(undefined, 0), undefined)
    const a = sessions.create(0)
    const b = sessions.create(1)
    const c = sessions.create(2)
    assert.strictEqual(sessions.fromCookie(`ocs_session=${a.id}`, 3), undefined)
    assert.ok(sessions.fromCookie(`ocs_session=${b.id}`, 3))
    sessions.end(c.id)
    assert.strictEqual(sessions.fromCookie(`ocs_session=${c.id}`, 3), undefined)
  })

  it("checks the CSRF token of the session only", () => {
    const sessions = Sessions.make({ secure: false })
    const a = sessions.create(0)
    const b = sessions.create(0)
    assert.ok(sessions.csrfValid(a, a.csrf))
    assert.notOk(sessions.csrfValid(a, b.csrf))
    assert.notOk(sessions.csrfValid(a, undefined))
    assert.notOk(sessions.csrfValid(a, ""))
    assert.notStrictEqual(a.id, b.id)
    assert.notStrictEqual(a.id, a.csrf)
  })

  it("writes the cookie HttpOnly and SameSite=Strict, Secure with a __Host- name under TLS", () => {
    const plain = Sessions.make({ secure: false })
    const s = plain.create(0)
    assert.strictEqual(plain.cookie(s), `ocs_session=${s.id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200`)
    assert.strictEqual(plain.cookie(undefined), "ocs_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")
    const tls = Sessions.make({ secure: true })
    const t = tls.create(0)
    assert.strictEqual(tls.cookie(t), `__Host-ocs_session=${t.id}; Path=/; HttpOnly; SameSite=Strict; Secure; Max-Age=43200`)
    assert.ok(tls.fromCookie(`__Host-ocs_session=${t.id}`, 1))
    assert.strictEqual(tls.fromCookie(`ocs_session=${t.id}`, 1), undefined, "only the prefixed cookie counts under TLS")
  })

  it("a session is alive until it ends or expires, and asking does not count as a use", () => {
    const sessions = Sessions.make({ secure: false, ttlMs: 10 * MIN, maxAgeMs: 30 * MIN })
    const s = sessions.create(0)
    assert.ok(sessions.alive(s.id, 9 * MIN))
    assert.notOk(sessions.alive(s.id, 11 * MIN), "idle expiry: alive() did not refresh it")
    const u = sessions.create(0)
    for (let at = 5 * MIN; at < 30 * MIN; at += 5 * MIN) assert.ok(sessions.fromCookie(`ocs_session=${u.id}`, at))
    assert.notOk(sessions.alive(u.id, 31 * MIN), "maximum age")
    const v = sessions.create(0)
    sessions.end(v.id)
    assert.notOk(sessions.alive(v.id, 1), "signed out")
  })

  it("blocks sign-in from one address for the rest of the minute after too many wrong keys from it", () => {
    const sessions = Sessions.make({ secure: false, maxFailuresPerMinute: 3 })
    for (let i = 0; i < 3; i++) {
      assert.notOk(sessions.signInBlocked("10.0.0.1", i * 1000))
      sessions.failedSignIn("10.0.0.1", i * 1000)
    }
    assert.ok(sessions.signInBlocked("10.0.0.1", 3000))
    assert.ok(sessions.signInBlocked("10.0.0.1", 59_999))
    assert.notOk(sessions.signInBlocked("10.0.0.2", 3000), "another address signs in")
    assert.notOk(sessions.signInBlocked("10.0.0.1", 60_000), "the first failure is a minute old")
  })
})
