/**
 * Whether the disk under a folder takes writes right now, found out without touching it from
 * the calling thread: a worker thread writes one byte to `<folder>/.disk-probe` (page cache
 * only, no fsync) when asked, and every `intervalMillis` on its own.
 *
 * Why: on a stalled disk (a frozen filesystem, a hung network volume) a write system call, or a
 * write to a memory-mapped page of a file on it (SQLite's `-shm`), waits until the disk returns,
 * past every lock-wait bound; made on the main thread it stops the whole server. So a handle of
 * `SqliteDatabase` that may write asks for a fresh probe first (`answers`): one that started
 * after the question and came back, and writes in the handler of its reply. A stalled disk answers no once the worker's write has been
 * under way for `stallAfterMillis`, and the handle fails instead of writing (docs/architecture.md
 * §4.30). Only the write system call is timed (the worker marks its start in shared memory), so an
 * overloaded machine, where messages between the threads wait, does not read as a stalled disk.
 * The window left is the moment between the probe's return and the write.
 */
import { Effect, type Scope } from "effect"
import * as NodePath from "node:path"
import { Worker } from "node:worker_threads"

export interface Options {
  readonly folder: string
  /** A probe at least this often, asked or not (default 100). */
  readonly intervalMillis?: number | undefined
  /**
   * The worker's write under way this long means a stalled disk (default 500). Measured on the
   * worker's side, from just before its write system call: time the question or the answer spent
   * waiting for a busy thread is not counted.
   */
  readonly stallAfterMillis?: number | undefined
  /**
   * An answer handled later than this after the worker's write returned (a busy main thread) is
   * not used: the waiter asks again, at most twice (default 20). It bounds the time between the
   * write that answered and the access it lets through.
   */
  readonly freshMillis?: number | undefined
}

export interface DiskProbe {
  /** True from when a probe's write is known late (`stallAfterMillis`) until a probe returns. */
  readonly stalled: () => boolean
  /**
   * Calls `then(true)` when a probe sent after this call returns, synchronously in the handler of
   * its reply, so that what `then` writes follows the probe as closely as the thread allows;
   * `then(false)` when none returns in time.
   */
  readonly ask: (then: (ok: boolean) => void) => void
}

// Plain CommonJS for an eval worker: node built-ins only, nothing to resolve.
// The worker marks in shared memory when its write began (0 when none is under way), so the
// main thread judges the write itself, not the messages around it.
const workerSource = `
const { parentPort, workerData } = require("node:worker_threads")
const fs = require("node:fs")
const fd = fs.openSync(workerData.file, "w", 0o600)
const byte = Buffer.from([0])
const writing = new BigInt64Array(workerData.writing)
parentPort.on("message", () => {
  let ok = true
  Atomics.store(writing, 0, BigInt(Math.ceil(performance.timeOrigin + performance.now())))
  try { fs.writeSync(fd, byte, 0, 1, 0) } catch { ok = false }
  Atomics.store(writing, 0, 0n)
  parentPort.postMessage(ok ? performance.timeOrigin + performance.now() : 0)
})
parentPort.postMessage(1)`

/** Who waits, and how many answers it found too old already. */
interface Waiter {
  readonly answer: (ok: boolean) => void
  readonly stale: number
}

/** Answers read too old that send a waiter back for a fresh probe, at most (then it runs). */
const MAX_STALE = 2

/** Starts the probe in the current scope, once its worker has written once; ended with the scope. */
export const make = (options: Options): Effect.Effect<DiskProbe, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.callback<{ readonly probe: DiskProbe; readonly worker: Worker; readonly timer: () => NodeJS.Timeout | undefined }>((resume) => {
        const intervalMillis = options.intervalMillis ?? 100
        const stallAfterMillis = options.stallAfterMillis ?? 500
        const freshMillis = options.freshMillis ?? 20
        const writing = new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT)
        /** When the worker's write under way began (ms since the epoch), 0 when none is. */
        const writeBegan = new BigInt64Array(writing)
        const worker = new Worker(workerSource, { eval: true, workerData: { file: NodePath.join(options.folder, ".disk-probe"), writing } })
        // A worker stuck in a write must not keep the process alive.
        worker.unref()
        let started = false
        /** Set once a probe is known late (messages were read since), cleared by its reply. */
        let declared = false
        /** Who waits for the probe in flight. */
        let inFlight: { readonly waiters: Array<Waiter> } | undefined
        /** Waiters that asked while a probe was in flight: they need the next one. */
        let next: Array<Waiter> = []
        const send = (waiters: Array<Waiter>) => {
          inFlight = { waiters }
          // oxlint-disable-next-line unicorn/require-post-message-target-origin -- node:worker_threads, not window
          worker.postMessage(0)
        }
        /** `doneAt`: when the worker's write returned (ms since the epoch), 0 when it failed. */
        const settle = (doneAt: number) => {
          const ok = doneAt > 0
          const done = inFlight
          inFlight = undefined
          declared = !ok
          const age = performance.timeOrigin + performance.now() - doneAt
          for (const w of done?.waiters ?? []) {
            // An answer read long after the write (the thread was busy) says less about the disk
            // now: the waiter asks again, a bounded number of times, so that the time between
            // the write that answered and the access stays short however loaded the machine is.
            if (ok && age > freshMillis && w.stale < MAX_STALE) next.unshift({ answer: w.answer, stale: w.stale + 1 })
            else w.answer(ok)
          }
          // One waiter per probe, sent once its work is done: a second waiter would write after
          // that work, and a freeze may have started meanwhile.
          if (inFlight === undefined && next.length > 0) send(next.splice(0, 1))
        }
        // Late means the worker's write system call itself has been under way for longer than
        // the bound, read from the clock the worker set before it: a main thread busy elsewhere,
        // a reply waiting in the queue, or a worker not yet scheduled to take the question (an
        // overloaded machine) never count, only a write that does not return.
        const late = () => {
          if (inFlight === undefined) return false
          const began = Number(Atomics.load(writeBegan, 0))
          return began > 0 && performance.timeOrigin + performance.now() - began > stallAfterMillis
        }
        /** Everyone waiting is told now, not at the thaw. */
        const declare = () => {
          declared = true
          for (const w of inFlight?.waiters.splice(0) ?? []) w.answer(false)
          for (const w of next) w.answer(false)
          next = []
        }
        worker.on("message", (doneAt: number) => {
          if (!started) {
            started = true
            timer = setInterval(tick, intervalMillis)
            timer.unref()
            resume(Effect.succeed({ probe, worker, timer: () => timer }))
            return
          }
          settle(doneAt)
        })
        // A probe that cannot run (the worker died) reads as a stalled disk: fail fast, never hang.
        worker.on("error", () => {
          inFlight = { waiters: [] }
          declare()
          if (!started) {
            started = true
            resume(Effect.succeed({ probe, worker, timer: () => timer }))
          }
        })
        const tick = () => {
          if (inFlight === undefined) send([])
          else if (!declared && late()) declare()
        }
        let timer: NodeJS.Timeout | undefined
        const stalled = () => declared
        const ask = (then: (ok: boolean) => void) => {
          if (declared) then(false)
          else if (inFlight === undefined) send([{ answer: then, stale: 0 }])
          else next.push({ answer: then, stale: 0 })
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
