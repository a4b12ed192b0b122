/**
 * Planning on two threads for `rebuild`. Each batch read from the log is posted whole to a
 * worker thread (./plan.worker.ts) and cut into chunks; the worker plans chunks from the front
 * (decodes them and turns them into statement parameters, ./plan.ts) while this thread writes
 * the oldest batch. When the batch this thread must write next is not planned yet, it plans
 * chunks itself rather than wait: that batch's chunk if the worker has not taken it, else the
 * last chunk nobody has taken. A chunk belongs to whichever thread claims it first (an atomic
 * compare-and-swap on a shared array), so the worker never waits for this thread to hand it
 * work. Until the worker has loaded (and if it cannot start) this thread plans every chunk.
 * Plans are pure: who plans a chunk, and when, changes nothing in the result.
 */
import { SqliteError } from "@ocs/sqlite"
import { Effect, type Scope } from "effect"
import { Worker } from "node:worker_threads"
import { Claim, type Plan, type PlanReply, type PlanRequest, planRecords, type ProjectableRecord, toColumns } from "./plan.ts"

/** Records per chunk: the unit of work either thread claims. */
const CHUNK = 500

interface Batch<R extends ProjectableRecord> {
  readonly id: number
  readonly records: ReadonlyArray<R>
  readonly claims: Int32Array
  /** Per chunk, once planned (by either thread). */
  readonly plans: Array<Plan | undefined>
}

export interface Pipeline<R extends ProjectableRecord> {
  /** Batches added and not taken yet. */
  readonly size: () => number
  /** Queues a batch (the worker starts on it as soon as it is free). */
  readonly add: (records: ReadonlyArray<R>) => void
  /** The oldest batch with the plans of its chunks in order, once all are planned. */
  readonly take: () => Promise<{ readonly records: ReadonlyArray<R>; readonly plans: ReadonlyArray<Plan> }>
  /** True once the worker has loaded; false if it cannot (everything is then planned here). */
  readonly workerReady: Promise<boolean>
}

// Under Node's type stripping (and vitest) this module is the .ts source; built, it is .js.
const workerUrl = new URL(import.meta.url.endsWith(".ts") ? "./plan.worker.ts" : "./plan.worker.js", import.meta.url)

/** A pipeline with its planner thread, stopped when the scope closes. */
export const make = <R extends ProjectableRecord>(filename: string): Effect.Effect<Pipeline<R>, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const queue: Array<Batch<R>> = []
      let nextId = 0
      let broken: SqliteError | undefined
      let wake: (() => void) | undefined
      let settleReady: (loaded: boolean) => void = () => {}
      const workerReady = new Promise<boolean>((resolve) => (settleReady = resolve))
      const fail = (message: string) => {
        broken ??= new SqliteError({ filename, operation: "plan", message: `rebuild of ${filename}: ${message}`, cause: new Error(message) })
        wake?.()
      }

      let worker: Worker | undefined
      try {
        worker = new Worker(workerUrl)
      } catch {
        worker = undefined
        settleReady(false)
      }

      /** A chunk the worker claimed and will never answer for (it is gone). */
      const lost = () =>
        queue.some((b) => b.plans.some((plan, c) => plan === undefined && Atomics.load(b.claims, c) === Claim.worker))

      if (worker !== undefined) {
        worker.on("message", (reply: PlanReply) => {
          if (reply._tag === "Ready") return settleReady(true)
          const batch = queue.find((b) => b.id === reply.batch)
          if (batch === undefined) return
          if (reply._tag === "Planned") batch.plans[reply.chunk] = reply.plan
          else fail(`planner thread: ${reply.error}`)
          wake?.()
        })
        // A thread that fails or exits takes no more chunks (this thread plans them); a chunk
        // it had claimed fails the rebuild.
        const gone = (message: string) => {
          worker = undefined
          settleReady(false)
          // Claims it can no longer make: mark every free chunk as this thread's.
          if (lost()) fail(message)
          wake?.()
        }
        worker.on("error", (cause) => gone(`planner thread failed: ${cause.message}`))
        worker.on("exit", (code) => gone(`planner thread exited with code ${code}`))
      }

      /** Plans chunk `c` of `batch` here if nobody has claimed it; false if the worker has it. */
      const claimHere = (batch: Batch<R>, c: number): boolean => {
        if (Atomics.compareExchange(batch.claims, c, Claim.free, Claim.caller) !== Claim.free) return false
        batch.plans[c] = planRecords(batch.records.slice(c * CHUNK, (c + 1) * CHUNK))
        return true
      }

      /** Plans the last chunk nobody has claimed (the worker works from the front); false if none. */
      const helpFromBack = (): boolean => {
        for (let b = queue.length - 1; b >= 0; b--) {
          const batch = queue[b]!
          for (let c = batch.claims.length - 1; c >= 0; c--) {
            if (Atomics.load(batch.claims, c) === Claim.free && claimHere(batch, c)) return true
          }
        }
        return false
      }

      const add = (records: ReadonlyArray<R>) => {
        const chunks = Math.ceil(records.length / CHUNK)
        const batch: Batch<R> = {
          id: nextId++,
          records,
          claims: new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * chunks)),
          plans: Array.from({ length: chunks }, () => undefined)
        }
        queue.push(batch)
        // Posted even before the worker has loaded: it finds the batch when it starts.
        // oxlint-disable-next-line unicorn/require-post-message-target-origin -- node:worker_threads, not window
        worker?.postMessage({ batch: batch.id, chunkSize: CHUNK, claims: batch.claims, records: toColumns(records) } satisfies PlanRequest)
      }

      const take = async () => {
        const batch = queue[0]!
        for (let c = 0; c < batch.plans.length; c++) {
          while (batch.plans[c] === undefined) {
            if (broken !== undefined) throw broken
            if (claimHere(batch, c)) continue
            // The worker has it. Its plan is on the way: wait for it. Still planning: help
            // with the last chunk nobody has taken, then let the worker's answers in.
            if (Atomics.load(batch.claims, c) === Claim.worker && helpFromBack()) {
              await new Promise<void>((resolve) => setImmediate(resolve))
              continue
            }
            if (worker === undefined && lost()) fail("planner thread gone")
            if (broken !== undefined) throw broken
            await new Promise<void>((resolve) => (wake = resolve))
            wake = undefined
          }
        }
        queue.shift()
        return { records: batch.records, plans: batch.plans as ReadonlyArray<Plan> }
      }

      return { pipeline: { size: () => queue.length, add, take, workerReady }, terminate: () => worker?.terminate() }
    }),
    (p) => Effect.promise(async () => void (await p.terminate()))
  ).pipe(Effect.map((p) => p.pipeline))
