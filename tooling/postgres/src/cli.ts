/**
 * Starts a server for local work and keeps it until Ctrl-C (or SIGTERM/SIGHUP):
 *
 *   ./ocs --filter @ocs/postgres-server start                  # free port
 *   ./ocs --filter @ocs/postgres-server start -- --port 5433 --database ocs
 *
 * Prints `OCS_POSTGRES_URL=postgres://postgres@127.0.0.1:<port>/<database>` on stdout once the
 * server accepts connections (its log goes to stderr). The data is deleted when it stops.
 */
import { parseArgs } from "node:util"
import { startPostgres } from "./Server.ts"

const usage = "usage: node src/cli.ts [--port N] [--database NAME] [--quiet]"

const main = async (): Promise<number> => {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((arg) => arg !== "--"),
    options: {
      port: { type: "string" },
      database: { type: "string" },
      quiet: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false }
    }
  })
  if (values.help) {
    console.error(usage)
    return 0
  }
  const port = values.port === undefined ? undefined : Number(values.port)
  if (port !== undefined && (!Number.isInteger(port) || port <= 0)) {
    console.error(`--port must be a positive integer\n${usage}`)
    return 2
  }
  const started = Date.now()
  const server = await startPostgres({ ...(port === undefined ? {} : { port }), echo: !values.quiet })
  const url = values.database === undefined ? server.url : await server.createDatabase(values.database)
  console.error(`[postgres] PostgreSQL ${server.version} ready in ${Date.now() - started} ms (data in ${server.dir}, deleted on stop)`)
  console.log(`OCS_POSTGRES_URL=${url}`)
  await new Promise<void>((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(signal, () => resolve())
  })
  await server.close()
  return 0
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error))
    process.exit(1)
  }
)
