/**
 * Whether the disk under a folder takes writes right now, found out without touching it from
 * the calling thread: a worker thread writes one byte to `<folder>/.disk-probe` (page cache
 * only, no fsync) when asked, and every `intervalMillis` on its own.
 *
 * Why: on a stalled disk (a frozen filesystem, a hung network volume) a write system call, or a
 * write to a memory-mapped page of a file on it (SQLite's `-shm`), waits until the disk returns,
 * past every lock-wait bound; made on the main thread it stops the whole server. So a handle of
 * `SqliteDatabase` that may write asks for a fresh probe first (`answers`): one that started
 * after the question and came back, and writes in the handler of its reply. A stalled disk answers no within `stallAfterMillis`, and the
 * handle fails instead of writing (docs/architecture.md §4.30). The window left is the moment
 * between the probe's return and the write.
 */
import { Effect, type Scope } from "effect"
import * as NodePath from "node:path"
import { Worker } from "node:worker_threads"

export interface Options {
  readonly folder: string
  /** A probe at least this often, asked or not (default 100). */
  readonly intervalMillis?: number | undefined
  /** A probe outstanding this long means a stalled disk (default 500). */
  readonly stallAfterMillis?: number | undefined
}

export interface DiskProbe {
  /** True from when a probe is known late (`stallAfterMillis`) until a probe returns. */
  readonly stalled: () => boolean
  /**
   * Calls `then(true)` when a probe sent after this call returns, synchronously in the handler of
   * its reply, so that what `then` writes follows the probe as closely as the thread allows;
   * `then(false)` when none returns in time.
   */
  readonly ask: (then: (ok: boolean) => void) => void
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
})
parentPort.postMessage(true)`

type Waiter = (ok: boolean) => void

/** Starts the probe in the current scope, once its worker has written once; ended with the scope. */
export const make = (options: Options): Effect.Effect<DiskProbe, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.callback<{ readonly probe: DiskProbe; readonly worker: Worker; readonly timer: () => NodeJS.Timeout | undefined }>((resume) => {
        const intervalMillis = options.intervalMillis ?? 100
        const stallAfterMillis = options.stallAfterMillis ?? 500
        const worker = new Worker(workerSource, { eval: true, workerData: { file: NodePath.join(options.folder, ".disk-probe") } })
        // A worker stuck in a write must not keep the process alive.
        worker.unref()
        let started = false
        /** Set once a probe is known late (messages were read since), cleared by its reply. */
        let declared = false
        /** When the probe in flight was sent, and who waits for it. */
        let inFlight: { readonly since: number; readonly waiters: Array<Waiter> } | undefined
        /** Waiters that asked while a probe was in flight: they need the next one. */
        let next: Array<Waiter> = []
        const send = (waiters: Array<Waiter>) => {
          inFlight = { since: performance.now(), waiters }
          // oxlint-disable-next-line unicorn/require-post-message-target-origin -- node:worker_threads, not window
          worker.postMessage(0)
        }
        const settle = (ok: boolean) => {
          const done = inFlight
          inFlight = undefined
          declared = !ok
          for (const w of done?.waiters ?? []) w(ok)
          // One waiter per probe, sent once its work is done: a second waiter would write after
          // that work, and a freeze may have started meanwhile.
          if (inFlight === undefined && next.length > 0) send(next.splice(0, 1))
        }
        const late = () => inFlight !== undefined && performance.now() - inFlight.since > stallAfterMillis
        /** Everyone waiting is told now, not at the thaw. */
        const declare = () => {
          declared = true
          for (const w of inFlight?.waiters.splice(0) ?? []) w(false)
          for (const w of next) w(false)
          next = []
        }
        worker.on("message", (ok: boolean) => {
          if (!started) {
            started = true
            timer = setInterval(tick, intervalMillis)
            timer.unref()
            resume(Effect.succeed({ probe, worker, timer: () => timer }))
            return
          }
          settle(ok)
        })
        // A probe that cannot run (the worker died) reads as a stalled disk: fail fast, never hang.
        worker.on("error", () => {
          inFlight = { since: Number.NEGATIVE_INFINITY, waiters: [] }
          declare()
          if (!started) {
            started = true
            resume(Effect.succeed({ probe, worker, timer: () => timer }))
          }
        })
        // Late is judged after a turn of the event loop: a main thread that was busy for longer
        // than stallAfterMillis has the reply waiting, not a stalled disk.
        const tick = () => {
          if (inFlight === undefined) send([])
          else if (late() && !declared) setImmediate(() => late() && declare())
        }
        let timer: NodeJS.Timeout | undefined
        const stalled = () => declared
        const ask = (then: Waiter) => {
          if (declared) then(false)
          else if (inFlight === undefined) send([then])
          else next.push(then)
        }
        const probe: DiskProbe = { stalled, ask }
      }),
      ({ timer, worker }) =>
        Effect.sync(() => {
          clearInterval(timer())
          // Not awaited: a worker inside a stalled write ends when the write returns.
          void worker.terminate()
        })
    ),
    ({ probe }) => probe
  )
