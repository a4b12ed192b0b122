/**
 * vitest globalSetup: starts one PostgreSQL server for a project and provides its superuser URL
 * to test files as `inject("postgresUrl")` (see testing.ts: each file takes a fresh database).
 *
 *   { test: { name: "postgres", globalSetup: ["./tooling/postgres/src/globalSetup.ts"], ... } }
 *
 * - OCS_POSTGRES_URL set (a superuser URL of a server of your own): provided as is, nothing starts.
 * - The server cannot start because this machine has no PostgreSQL 15 and cannot install it, or
 *   no non-root user: with CI=true the run fails (it never skips in CI); otherwise a warning is
 *   printed and "" is provided, so suites using `describe.skipIf(postgresUnavailable())` skip.
 * - Any other failure (initdb or the server itself) fails the run everywhere.
 *
 * Knob: OCS_POSTGRES_ECHO=1 echoes the server's log to stderr.
 */
import type { TestProject } from "vitest/node"
import { postgresUrlKey } from "./context.ts"
import { isEnvironmentError } from "./PostgresError.ts"
import { type PostgresServer, startPostgres } from "./Server.ts"

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.OCS_POSTGRES_URL?.trim()
  if (external) {
    project.provide(postgresUrlKey, external)
    return async () => {}
  }
  const started = Date.now()
  let server: PostgresServer
  try {
    server = await startPostgres({ echo: process.env.OCS_POSTGRES_ECHO === "1" })
  } catch (error) {
    if (process.env.CI === "true" || !isEnvironmentError(error)) throw error
    process.stderr.write(
      `\n[postgres] WARNING: no PostgreSQL server for project "${project.name}"; its PostgreSQL suites are SKIPPED.\n` +
        `[postgres] ${error.message.replace(/\n/g, "\n[postgres] ")}\n` +
        "[postgres] (with CI=true this fails the run instead)\n\n"
    )
    project.provide(postgresUrlKey, "")
    return async () => {}
  }
  process.stderr.write(`[postgres] PostgreSQL ${server.version} ready at 127.0.0.1:${server.port} in ${Date.now() - started} ms\n`)
  project.provide(postgresUrlKey, server.url)
  return () => server.close()
}
