/**
 * A real PostgreSQL 15 server for tests and local work, like tooling/kafka's broker:
 *
 *   await using pg = await startPostgres()
 *   pg.url                                  // postgres://postgres@127.0.0.1:<port>/postgres
 *   const url = await pg.createDatabase()   // a fresh, empty database of its own
 *
 * - Binaries: Debian's `postgresql-15` (/usr/lib/postgresql/15/bin); where they are missing,
 *   scripts/install-postgres.sh apt-installs the package (root only).
 * - Never as root (PostgreSQL refuses it anyway): when this process is root, the server runs as
 *   the `postgres` system user (created when missing) through `runuser`; otherwise as this user.
 * - initdb in a fresh `$TMPDIR/ocs-postgres-XXXXXX/`, its own free port on 127.0.0.1, the unix
 *   socket in that folder. Settings are PostgreSQL's defaults (fsync, synchronous_commit and
 *   full_page_writes on), so no suite passes on a durability shortcut production lacks.
 *   Authentication is `trust` for connections from this machine only (a test server).
 * - Stopped on exit: `close()` asks for a fast shutdown and deletes the folder; an exit handler
 *   kills what is left; scripts/run-postgres.sh stops the postmaster when the pipe on its stdin
 *   closes, i.e. when this process dies in any way (SIGKILL included). Folders left by a killed
 *   process are swept by the next start.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { PostgresServerError } from "./PostgresError.ts"

const scripts = fileURLToPath(new URL("../scripts/", import.meta.url))
const defaultBin = "/usr/lib/postgresql/15/bin"
const dirPrefix = "ocs-postgres-"

export interface StartOptions {
  /** A port on 127.0.0.1; a free one by default. */
  readonly port?: number
  /** One start until the server accepts connections. Default 60 000. */
  readonly startTimeoutMs?: number
  /** Fast shutdown until SIGKILL. Default 15 000. */
  readonly stopTimeoutMs?: number
  /** Server output to stderr (true) or to a function, line by line. */
  readonly echo?: boolean | ((line: string) => void)
}

export interface PostgresServer extends AsyncDisposable {
  /** The superuser's URL of the `postgres` database. */
  readonly url: string
  readonly port: number
  /** The temporary folder: `data/` (the cluster) and the unix socket. */
  readonly dir: string
  readonly version: string
  readonly pid: number | undefined
  /** A new empty database (named `name`, else a fresh unique name); resolves to its URL. */
  readonly createDatabase: (name?: string) => Promise<string>
  /** The last lines the server printed. */
  readonly logTail: (n?: number) => ReadonlyArray<string>
  /** Fast shutdown, then the folder is deleted. */
  readonly close: () => Promise<void>
}

const run = (file: string, args: ReadonlyArray<string>, timeoutMs = 120_000): Promise<{ code: number; output: string }> =>
  new Promise((resolve) => {
    execFile(file, [...args], { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resolve({ code, output: `${stdout}${stderr}`.trim() })
    })
  })

const tail = (text: string, n = 30): string => text.split("\n").slice(-n).join("\n")

/** The folder of `postgres` and `initdb`, installing Debian's package where they are missing. */
export const ensureBinaries = async (): Promise<string> => {
  if (fs.existsSync(path.join(defaultBin, "postgres")) && fs.existsSync(path.join(defaultBin, "initdb"))) return defaultBin
  const { code, output } = await run("sh", [path.join(scripts, "install-postgres.sh")], 900_000)
  if (code !== 0) throw new PostgresServerError("binaries-missing", "PostgreSQL 15 is not installed and could not be installed", tail(output))
  return output.split("\n").at(-1)!.trim()
}

interface RunAs {
  /** The command prefix that runs a program as the server's user. */
  readonly prefix: ReadonlyArray<string>
  readonly uid: number
  readonly gid: number
}

/** Root runs the server as `postgres` (created when missing); anyone else runs it as themselves. */
const serverUser = async (): Promise<RunAs> => {
  if (process.getuid?.() !== 0) return { prefix: [], uid: process.getuid?.() ?? -1, gid: process.getgid?.() ?? -1 }
  const id = async () => {
    const uid = await run("id", ["-u", "postgres"])
    const gid = await run("id", ["-g", "postgres"])
    return uid.code === 0 && gid.code === 0 ? { uid: Number(uid.output), gid: Number(gid.output) } : undefined
  }
  let ids = await id()
  if (ids === undefined) {
    const made = await run("useradd", ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres"])
    ids = await id()
    if (ids === undefined) throw new PostgresServerError("user-missing", "no `postgres` user to run the server as, and useradd failed", made.output)
  }
  return { prefix: ["runuser", "-u", "postgres", "--"], ...ids }
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Removes folders of servers whose Node process and postmaster are both gone. */
const sweepStaleDirs = async (): Promise<void> => {
  const tmp = os.tmpdir()
  const names = (await fsp.readdir(tmp).catch(() => [] as Array<string>)).filter((name) => name.startsWith(dirPrefix))
  await Promise.all(
    names.map(async (name) => {
      const dir = path.join(tmp, name)
      try {
        const owner = JSON.parse(await fsp.readFile(path.join(dir, "owner.json"), "utf8")) as { nodePid?: number }
        if (typeof owner.nodePid !== "number" || owner.nodePid === process.pid || isAlive(owner.nodePid)) return
        const postmaster = await fsp.readFile(path.join(dir, "data", "postmaster.pid"), "utf8").catch(() => "")
        const pid = Number(postmaster.split("\n")[0])
        if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) return
        await fsp.rm(dir, { recursive: true, force: true })
      } catch {
        // not ours, or being written right now
      }
    })
  )
}

/** Servers of this process still running; the exit handler kills them. */
const live = new Set<ChildProcess>()
let exitHandler = false
const installExitHandler = (): void => {
  if (exitHandler) return
  exitHandler = true
  process.on("exit", () => {
    for (const child of live) {
      try {
        child.kill("SIGTERM")
      } catch {
        // gone already
      }
    }
  })
}

/** Starts a server and resolves when it accepts connections. */
export const startPostgres = async (options: StartOptions = {}): Promise<PostgresServer> => {
  const started = Date.now()
  const bin = await ensureBinaries()
  const as = await serverUser()
  await sweepStaleDirs()
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), dirPrefix))
  await fsp.writeFile(path.join(dir, "owner.json"), JSON.stringify({ nodePid: process.pid }))
  await fsp.chmod(dir, 0o700)
  if (as.prefix.length > 0) await fsp.chown(dir, as.uid, as.gid)
  const data = path.join(dir, "data")
  const asUser = (file: string, args: ReadonlyArray<string>) =>
    as.prefix.length === 0 ? { file, args } : { file: as.prefix[0]!, args: [...as.prefix.slice(1), file, ...args] }

  const versionRun = await run(path.join(bin, "postgres"), ["--version"])
  const version = versionRun.output.replace(/^postgres \(PostgreSQL\) /, "")

  const initdb = asUser(path.join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"])
  const made = await run(initdb.file, initdb.args)
  if (made.code !== 0) {
    await fsp.rm(dir, { recursive: true, force: true })
    throw new PostgresServerError("initdb-failed", `initdb failed (exit ${made.code})`, tail(made.output))
  }

  const port = options.port ?? (await freePort())
  const runner = asUser("sh", [path.join(scripts, "run-postgres.sh"), bin, data, String(port), dir])
  const child = spawn(runner.file, runner.args, { stdio: ["pipe", "pipe", "pipe"] })
  live.add(child)
  installExitHandler()
  const lines: Array<string> = []
  const onOutput = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line === "") continue
      lines.push(line)
      if (lines.length > 500) lines.shift()
      if (options.echo === true) process.stderr.write(`[postgres] ${line}\n`)
      else if (typeof options.echo === "function") options.echo(line)
    }
  }
  child.stdout!.on("data", onOutput)
  child.stderr!.on("data", onOutput)
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  void exited.then(() => live.delete(child))

  const removeDir = () => fsp.rm(dir, { recursive: true, force: true })
  let closed: Promise<void> | undefined
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM")
        const timer = setTimeout(() => {
          // the postmaster itself (runuser forwards SIGTERM only): its pid is in postmaster.pid
          try {
            const pid = Number(fs.readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0])
            if (pid > 0) process.kill(pid, "SIGKILL")
          } catch {
            // no pid file, or the postmaster is gone already
          }
          child.kill("SIGKILL")
        }, options.stopTimeoutMs ?? 15_000)
        await exited
        clearTimeout(timer)
      }
      child.stdin?.destroy()
      await removeDir()
    })())

  // Ready: pg_isready answers "accepting connections" on the TCP port.
  const deadline = started + (options.startTimeoutMs ?? 60_000)
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await removeDir()
      throw new PostgresServerError("start-failed", `the server exited while starting (exit ${child.exitCode ?? child.signalCode})`, lines.slice(-30).join("\n"))
    }
    const ready = await run(path.join(bin, "pg_isready"), ["-q", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-t", "1"])
    if (ready.code === 0) break
    if (Date.now() > deadline) {
      await close()
      throw new PostgresServerError("start-timeout", `the server did not accept connections within ${options.startTimeoutMs ?? 60_000} ms`, lines.slice(-30).join("\n"))
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }

  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  let databases = 0
  const psql = path.join(bin, "psql")
  const createDatabase = async (name?: string): Promise<string> => {
    const db = name ?? `t_${process.pid}_${Date.now().toString(36)}_${databases++}`
    if (!/^[a-z_][a-z0-9_]*$/.test(db)) throw new Error(`not a plain database name: ${db}`)
    const made = await run(psql, ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", `CREATE DATABASE ${db}`])
    if (made.code !== 0) throw new Error(`CREATE DATABASE ${db} failed: ${made.output}`)
    return `postgres://postgres@127.0.0.1:${port}/${db}`
  }

  return {
    url,
    port,
    dir,
    version,
    get pid() {
      return child.pid
    },
    createDatabase,
    logTail: (n = 30) => lines.slice(-n),
    close,
    [Symbol.asyncDispose]: close
  }
}

/** Creates a database on a running server given by its superuser URL (used by the test helpers). */
export const createDatabaseAt = async (url: string, name: string): Promise<string> => {
  const bin = await ensureBinaries()
  const made = await run(path.join(bin, "psql"), ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", `CREATE DATABASE ${name}`])
  if (made.code !== 0) throw new Error(`CREATE DATABASE ${name} failed: ${made.output}`)
  const target = new URL(url)
  target.pathname = `/${name}`
  return target.toString()
}
