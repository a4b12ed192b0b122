/**
 * The data folder holds customer data and the encryption key: owner-only. A new folder is
 * created 0700; an existing one with wider modes (0755 from a hand-made folder or an earlier
 * release) is tightened to 0700 at start, and a folder that cannot be tightened stops the
 * start with a message that says what to do.
 */
import * as Fs from "node:fs"

export class DataDirError extends Error {
  override readonly name = "DataDirError"
}

/** Creates or tightens `dir`; returns the mode it had when it was wider, for a log line. */
export const secure = (dir: string): number | undefined => {
  Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const mode = Fs.statSync(dir).mode & 0o777
  if ((mode & 0o077) === 0) return undefined
  try {
    Fs.chmodSync(dir, 0o700)
  } catch (cause) {
    throw new DataDirError(
      `the data folder ${dir} has mode 0${mode.toString(8)} and cannot be made owner-only (${cause instanceof Error ? cause.message : String(cause)}); ` +
        `run the server as the folder's owner, or chmod 700 it`
    )
  }
  return mode
}
