/**
 * The rebuild's planner thread: decodes log records (`DomainEvent.decode`, the schema boundary)
 * and turns them into statement parameters (./plan.ts) while the main thread writes the
 * previous batch; chunk by chunk, skipping the chunks the main thread has claimed. Loaded by
 * `new Worker(url)` with plain Node (type stripping); it imports no database code and keeps no
 * state between batches.
 */
import { parentPort } from "node:worker_threads"
import { Claim, fromColumns, type PlanReply, type PlanRequest, planRecords } from "./plan.ts"

const port = parentPort
if (port === null) throw new Error("plan.worker.ts runs as a worker thread")

port.on("message", (request: PlanRequest) => {
  const records = fromColumns(request.records)
  for (let chunk = 0; chunk < request.claims.length; chunk++) {
    // Taken by the other thread: skip it.
    if (Atomics.compareExchange(request.claims, chunk, Claim.free, Claim.worker) !== Claim.free) continue
    const start = chunk * request.chunkSize
    let reply: PlanReply
    try {
      reply = { _tag: "Planned", batch: request.batch, chunk, plan: planRecords(records.slice(start, start + request.chunkSize)) }
    } catch (cause) {
      reply = { _tag: "Failed", batch: request.batch, chunk, error: cause instanceof Error ? (cause.stack ?? cause.message) : String(cause) }
    }
    // oxlint-disable-next-line unicorn/require-post-message-target-origin -- node:worker_threads, not window
    port.postMessage(reply)
    Atomics.store(request.claims, chunk, Claim.posted)
  }
})
// oxlint-disable-next-line unicorn/require-post-message-target-origin -- node:worker_threads, not window
port.postMessage({ _tag: "Ready" } satisfies PlanReply)
