/**
 * Helpers for test files of a vitest project whose globalSetup is
 * `tooling/postgres/src/globalSetup.ts` (the root `postgres` project runs `test/postgres/**`):
 *
 *   import { describe, it } from "vitest"
 *   import { databaseOfFile, postgresUnavailable } from "@ocs/postgres-server/testing"
 *
 *   const database = databaseOfFile()
 *   describe.skipIf(postgresUnavailable())("orders", () => {
 *     it("round-trips", async () => { const url = database() ... })
 *   })
 *
 * Under CI=true globalSetup fails the run instead of providing "", so nothing skips there.
 */
import { afterAll, beforeAll, inject } from "vitest"
import { postgresUrlKey } from "./context.ts"
import { createDatabaseAt, type PostgresServer, startPostgres } from "./Server.ts"

const provided = (): unknown => inject(postgresUrlKey)

/** True when no server is available (outside CI, without PostgreSQL 15): skip the suite. */
export const postgresUnavailable = (): boolean => provided() === ""

let files = 0

/**
 * The URL of a fresh database of this test file, created before its tests: on the shared server
 * when one is provided, else on a server of the file's own (started before its tests, stopped
 * after them), so the file also runs outside the `postgres` project. Call it at the top of the
 * file; read the URL inside hooks and tests. Each call makes another database.
 */
export const databaseOfFile = (): (() => string) => {
  let url = ""
  let own: PostgresServer | undefined
  beforeAll(async () => {
    const shared = provided()
    const name = `f_${process.pid}_${Date.now().toString(36)}_${files++}`
    if (typeof shared === "string" && shared !== "") {
      url = await createDatabaseAt(shared, name)
    } else if (shared === "") {
      return // the suite skips
    } else {
      own = await startPostgres()
      url = await own.createDatabase(name)
    }
  }, 180_000)
  afterAll(async () => {
    await own?.close()
  })
  return () => {
    if (url === "") throw new Error("no PostgreSQL database: read it inside a test or hook, in a suite skipped when postgresUnavailable()")
    return url
  }
}
