/**
 * Whether the disk under a folder still takes writes, known without touching it from the
 * calling thread: a worker thread writes one byte to `<folder>/.disk-probe` (page cache only,
 * no fsync) every `intervalMillis`; a write outstanding for longer than `stallAfterMillis` means
 * the disk is stalled (a frozen filesystem, a hung network volume), and it is stalled until
 * that write returns.
 *
 * Why: on a stalled disk a write system call, or a write to a memory-mapped page of a file on
 * it (SQLite's `-shm`), waits until the disk returns, past every lock-wait bound; if the main
 * thread makes it, the whole server stops. `SqliteDatabase` handles consult `stalled` (through
 * `SqliteDatabase.DiskStall`) and fail fast instead (docs/architecture.md §4.30).
 */
import { Effect, type Scope } from "effect"
import * as NodePath from "node:path"
import { Worker } from "node:worker_threads"

export interface Options {
  readonly folder: string
  /** Default 100. */
  readonly intervalMillis?: number | undefined
  /** Default 300. */
  readonly stallAfterMillis?: number | undefined
}

export interface DiskProbe {
  /** True while a probe write has been outstanding for longer than `stallAfterMillis`. */
  readonly stalled: () => boolean
}

// Plain CommonJS for an eval worker: node built-ins only, nothing to resolve.
const workerSource = `
const { parentPort, workerData } = require("node:worker_threads")
const fs = require("node:fs")
const fd = fs.openSync(workerData.file, "w", 0o600)
const byte = Buffer.from([0])
parentPort.on("message", () => {
  let ok = true
  try { fs.writeSync(fd, byte, 0, 1, 0) } catch { ok = false }
  parentPort.postMessage(ok)
})`

/** Starts the probe in the current scope (the worker is ended with it). */
export const make = (options: Options): Effect.Effect<DiskProbe, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => {
        const intervalMillis = options.intervalMillis ?? 100
        const stallAfterMillis = options.stallAfterMillis ?? 300
        const worker = new Worker(workerSource, { eval: true, workerData: { file: NodePath.join(options.folder, ".disk-probe") } })
        // A worker stuck in a write must not keep the process alive.
        worker.unref()
        let outstandingSince: number | undefined
        worker.on("message", () => {
          outstandingSince = undefined
        })
        // A probe that cannot run (the worker died) reads as a stalled disk: fail fast, never hang.
        worker.on("error", () => {
          outstandingSince = 0
        })
        const timer = setInterval(() => {
          if (outstandingSince !== undefined) return
          outstandingSince = performance.now()
          // oxlint-disable-next-line unicorn/require-post-message-target-origin -- node:worker_threads, not window
          worker.postMessage(0)
        }, intervalMillis)
        timer.unref()
        const probe: DiskProbe = {
          stalled: () => outstandingSince !== undefined && performance.now() - outstandingSince > stallAfterMillis
        }
        return { probe, worker, timer }
      }),
      ({ timer, worker }) =>
        Effect.sync(() => {
          clearInterval(timer)
          // Not awaited: a worker inside a stalled write ends when the write returns.
          void worker.terminate()
        })
    ),
    ({ probe }) => probe
  )
