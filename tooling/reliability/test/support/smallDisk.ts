/**
 * A small disk for one of the server's files, to fill while the server runs: an 8 MiB tmpfs
 * beside the data folder, the file a symlink into it. Mounting needs root: off CI and not
 * root, a file using it skips its test with a message; on CI it runs (and fails if it cannot
 * mount). Unmounted (lazily, as the server may still hold the file) after the file.
 */
import { afterAll, assert } from "vitest"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"

const isRoot = process.getuid?.() === 0
const onCi = process.env["CI"] !== undefined && process.env["CI"] !== "" && process.env["CI"] !== "false"

/** Whether this machine can mount a small disk; when not, says why under the file's `name`. */
export const canMountSmallDisk = (name: string, what: string): boolean => {
  if (!isRoot && !onCi) console.log(`[${name}] skipped: mounting a small tmpfs for ${what} needs root (runs on CI)`)
  return isRoot || onCi
}

export interface SmallDisk {
  /** Writes a filler file until the disk is full (ENOSPC). */
  readonly fill: () => void
  /** Removes the filler: space returns. */
  readonly free: () => void
}

/**
 * Small disks for a file's tests. Call it after `reliabilitySuite`: its unmount then runs
 * before the suite's cleanup removes the folders.
 */
export const smallDisks = () => {
  const mounts: Array<string> = []
  afterAll(() => {
    for (const m of mounts) execFileSync("umount", ["-l", m])
  })
  return {
    /** Mounts a small disk beside `dataDir` (created if missing) and links `file` into it. */
    under: (dataDir: string, file: string): SmallDisk => {
      const small = Path.join(Path.dirname(dataDir), "small-disk")
      Fs.mkdirSync(dataDir, { recursive: true })
      Fs.mkdirSync(small)
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", small])
      mounts.push(small)
      Fs.symlinkSync(Path.join(small, Path.basename(file)), file)
      const filler = Path.join(small, "filler")
      return {
        fill: () => {
          const fd = Fs.openSync(filler, "w")
          const chunk = Buffer.alloc(64 * 1024, 1)
          try {
            for (;;) Fs.writeSync(fd, chunk)
          } catch (e) {
            assert.strictEqual((e as NodeJS.ErrnoException).code, "ENOSPC")
          } finally {
            Fs.closeSync(fd)
          }
        },
        free: () => Fs.rmSync(filler)
      }
    }
  }
}
