/**
 * How a raw better-sqlite3 connection is prepared, for the code that cannot go through
 * `SqliteDatabase` (the event log's writer thread has its own connection).
 *
 * Plain functions, no Effect: a worker thread loads this module with plain Node, and it
 * imports only node built-ins (better-sqlite3 for its types).
 */
import type Database from "better-sqlite3"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

export interface PragmaOptions {
  /**
   * "FULL" (default) fsyncs the WAL at every commit: an acknowledged transaction survives power
   * loss. "NORMAL" in WAL mode survives a process crash but may lose the last commits on power
   * loss; only choose it when the caller does not promise durability after ack.
   */
  readonly synchronous?: "FULL" | "NORMAL" | undefined
  /** How long a writer waits for another connection's lock before SQLITE_BUSY (default 5000). */
  readonly busyTimeoutMillis?: number | undefined
  /**
   * Exclusive locking (`locking_mode = EXCLUSIVE`, set before WAL): the connection keeps the
   * WAL index in its own memory, so no `-shm` file is created or memory-mapped. A thread that
   * reads a memory-mapped `-shm` page on a stalled disk (a frozen filesystem) stops in a page
   * fault until the disk returns, past every lock-wait bound; without the map it cannot. The
   * price: no other connection, in this process or another, can open the file while this one
   * holds it (it gets SQLITE_BUSY). For files one connection owns alone. Default false.
   */
  readonly exclusive?: boolean | undefined
}

/** Owner read and write only: the files hold access tokens and businesses' data. */
export const FILE_MODE = 0o600

/**
 * The pragmas durability needs, on a connection just opened: WAL (unless the connection is
 * read-only: it cannot change the journal mode), the synchronous level, the busy timeout, and
 * foreign keys (off by default in SQLite).
 */
export const applyPragmas = (client: Database.Database, options: PragmaOptions = {}): void => {
  // Before the first WAL access: SQLite then never calls the shared-memory methods.
  if (options.exclusive === true) client.pragma("locking_mode = EXCLUSIVE")
  if (!client.readonly) client.pragma("journal_mode = WAL")
  client.pragma(`synchronous = ${options.synchronous ?? "FULL"}`)
  client.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMillis ?? 5000))}`)
  client.pragma("foreign_keys = ON")
}

/** `:memory:` and `""` (a temporary database) have no file of ours. */
const isFile = (filename: string) => filename !== ":memory:" && filename !== ""

/**
 * Creates the database file (and its folder) if it does not exist yet, empty and with mode 0600,
 * before SQLite opens it. SQLite creates a database's `-wal`, `-shm` and `-journal` files with
 * the database file's mode, so they are owner-only as well. An empty file is an empty database.
 * A file that already exists keeps the mode it has (an operator may have chosen it).
 */
export const createPrivateFile = (filename: string): void => {
  if (!isFile(filename)) return
  const path = NodePath.resolve(filename)
  NodeFs.mkdirSync(NodePath.dirname(path), { recursive: true })
  let fd: number
  try {
    fd = NodeFs.openSync(path, "wx", FILE_MODE)
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "EEXIST") return
    throw cause
  }
  try {
    // The umask may have taken bits from the mode given to open (0200 would leave it read-only).
    NodeFs.fchmodSync(fd, FILE_MODE)
  } finally {
    NodeFs.closeSync(fd)
  }
}
