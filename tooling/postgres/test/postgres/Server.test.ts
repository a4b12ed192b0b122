/**
 * Runs in the root `postgres` vitest project, whose globalSetup (../../src/globalSetup.ts)
 * starts one shared server; shows how suites in packages/<name>/test/postgres/ use it.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { databaseOfFile, postgresUnavailable } from "../../src/testing.ts"

const database = databaseOfFile()
const psql = (url: string, sql: string): string =>
  execFileSync("/usr/lib/postgresql/15/bin/psql", ["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql], { encoding: "utf8" }).trim()

describe.skipIf(postgresUnavailable())("the shared PostgreSQL server of the postgres project", () => {
  it("is PostgreSQL 15 with production durability, not run as root, in a database of this file's own", () => {
    const url = database()
    expect(url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/f_\d+_/)
    expect(psql(url, "SHOW server_version_num").slice(0, 2)).toBe("15")
    expect(psql(url, "SELECT current_setting('fsync') || ',' || current_setting('synchronous_commit') || ',' || current_setting('full_page_writes')")).toBe("on,on,on")
    expect(psql(url, "SHOW listen_addresses")).toBe("127.0.0.1")
    // the postmaster's user: the server never runs as root (the postmaster, not this
    // connection's backend, which ends as soon as psql disconnects)
    const dataDirectory = psql(url, "SHOW data_directory")
    const pid = Number(readFileSync(`${dataDirectory}/postmaster.pid`, "utf8").split("\n")[0])
    const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
    expect(uid).toBeDefined()
    expect(Number(uid)).not.toBe(0)
    expect(psql(url, "SELECT current_database()")).toBe(new URL(url).pathname.slice(1))
  })

  it("keeps what a committed transaction wrote", () => {
    const url = database()
    psql(url, "CREATE TABLE t (id numeric PRIMARY KEY, body jsonb NOT NULL)")
    psql(url, `INSERT INTO t SELECT g, jsonb_build_object('n', g) FROM generate_series(1, 100) g`)
    expect(psql(url, "SELECT count(*) || ':' || sum((body->>'n')::int) FROM t")).toBe("100:5050")
  })
})
