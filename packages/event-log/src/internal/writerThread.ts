/**
 * The writer thread as the main thread sees it: started with the log, stopped with its scope,
 * handed one transaction at a time through `write` (each answered once it committed). The
 * thread itself is ./writer.worker.ts.
 */
import { Effect, Result, type Scope } from "effect"
import { Worker } from "node:worker_threads"
import { SqliteError } from "../EventLogError.ts"
import { encodeBatch } from "./rowCodec.ts"
import type { Outcomes, Row, WriteRequest, WriterConfig, WriterMessage } from "./writer.worker.ts"

// Under Node's type stripping (and vitest) this module is the .ts source; built, it is .js.
const writerUrl = new URL(import.meta.url.endsWith(".ts") ? "./writer.worker.ts" : "./writer.worker.js", import.meta.url)

interface Thread {
  readonly worker: Worker
  readonly exited: Promise<number>
}

export type Written = Result.Result<Outcomes, SqliteError>

export interface Writer {
  /**
   * Sends one transaction holding these append calls; `done` runs once it committed (or the
   * thread is gone). Batches are committed, and answered, in the order they were sent.
   */
  readonly write: (now: number, groups: ReadonlyArray<ReadonlyArray<Row>>, done: (written: Written) => void) => void
  readonly error: (message: string) => SqliteError
  /** Stops the thread abruptly, as a crash would (tests). */
  readonly kill: () => Promise<void>
}

/**
 * Starts the writer thread (resolves once it opened its connection) and stops it when the scope
 * closes. Several batches may be in flight (the caller bounds how many); the thread commits
 * and answers them in the order they were sent. If the thread dies, every batch in flight and
 * every later one fail with SqliteError: an append is never acknowledged without its commit.
 */
export const startWriter = (config: WriterConfig): Effect.Effect<Writer, SqliteError, Scope.Scope> => {
  const error = (operation: string) => (message: string) =>
    new SqliteError({ filename: config.filename, operation, message: `${operation} on ${config.filename}: ${message}`, cause: new Error(message) })
  const appendError = error("append")
  return Effect.acquireRelease(
    Effect.callback<Thread, SqliteError>((resume) => {
      const worker = new Worker(writerUrl, { workerData: config })
      const thread: Thread = { worker, exited: new Promise((ok) => worker.once("exit", ok)) }
      const done = (result: Effect.Effect<Thread, SqliteError>) => {
        worker.off("message", onMessage)
        worker.off("error", onError)
        worker.off("exit", onExit)
        resume(result)
      }
      const onMessage = (message: WriterMessage) => {
        if (message._tag === "Ready") done(Effect.succeed(thread))
        else if (message._tag === "OpenFailed") {
          void worker.terminate()
          done(Effect.fail(error("open")(`writer thread: ${message.error}`)))
        }
      }
      const onError = (cause: Error) => done(Effect.fail(error("open")(`writer thread failed: ${cause.message}`)))
      const onExit = (code: number) => done(Effect.fail(error("open")(`writer thread exited with code ${code}`)))
      worker.on("message", onMessage)
      worker.on("error", onError)
      worker.on("exit", onExit)
    }),
    ({ worker, exited }) =>
      Effect.promise(() => {
        // The thread closes its connection and exits; if it does not within 10 s, stop it.
        // oxlint-disable-next-line unicorn/require-post-message-target-origin -- node:worker_threads, not window
        worker.postMessage("close")
        const timer = setTimeout(() => void worker.terminate(), 10_000)
        return exited.then(() => clearTimeout(timer))
      })
  ).pipe(Effect.map(({ worker }): Writer => {
    // Idle, the thread does not keep the process alive; with a batch in flight it does.
    worker.unref()
    let seq = 0
    const inFlight = new Map<number, (written: Written) => void>()
    let dead: string | undefined
    const settle = (id: number, written: Written) => {
      const done = inFlight.get(id)
      if (done === undefined) return
      inFlight.delete(id)
      if (inFlight.size === 0) worker.unref()
      done(written)
    }
    const die = (message: string) => {
      dead ??= message
      // Deleting the visited entry while iterating a Map is well defined.
      for (const id of inFlight.keys()) settle(id, Result.fail(appendError(message)))
    }
    worker.on("message", (message: WriterMessage) => {
      if (message._tag === "Written") settle(message.seq, Result.succeed(message.outcomes))
      else if (message._tag === "Refused") settle(message.seq, Result.fail(appendError(`writer thread refused the batch: ${message.error}`)))
    })
    worker.on("error", (cause) => die(`writer thread failed: ${cause.message}`))
    worker.on("exit", (code) => die(`writer thread exited with code ${code}`))
    const write = (now: number, groups: ReadonlyArray<ReadonlyArray<Row>>, done: (written: Written) => void) => {
      if (dead !== undefined) return done(Result.fail(appendError(dead)))
      const id = ++seq
      inFlight.set(id, done)
      worker.ref()
      try {
        // oxlint-disable-next-line unicorn/require-post-message-target-origin -- node:worker_threads, not window
        worker.postMessage({ seq: id, now, groups: encodeBatch(groups) } satisfies WriteRequest)
      } catch (cause) {
        settle(id, Result.fail(appendError(`could not send the batch: ${cause instanceof Error ? cause.message : String(cause)}`)))
      }
    }
    return { write, error: appendError, kill: () => worker.terminate().then(() => undefined) }
  }))
}
