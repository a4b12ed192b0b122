/**
 * Kafka mode end to end: webhook -> local outbox -> Kafka -> projection. Throughput (webhooks
 * per second until all are visible in the read models) and lag (from the 200 to visible in
 * the read models, sampled), beside the same run in SQLite mode.
 *
 * The broker is warmed up first (one small Kafka-mode run, not counted: a cold JVM is not
 * what a server meets in service), then the two modes run in turns, and each mode's best run
 * is reported, so that load from elsewhere on the machine does not land on one mode only.
 * Server CPU per 1,000 webhooks is printed beside them: it is what the machine pays.
 *
 *   ./ocs node apps/sync-server/bench/kafka.bench.ts [--quick]
 */
import { startBroker } from "@ocs/kafka-broker"
import { eventually } from "../test/processes.ts"
import { APP, BUSINESS, cpuMicrosOf, startWebhookServer, TOKEN } from "./webhookServer.ts"

export interface KafkaModeResult {
  readonly webhooks: number
  readonly recordsPerSecond: number
  readonly lagP50Ms: number
  readonly lagP99Ms: number
  readonly baselineRecordsPerSecond: number
  readonly baselineLagP99Ms: number
  /** Server CPU (every thread) per 1,000 webhooks, in ms, in each mode's reported run. */
  readonly cpuMsPer1000: number
  readonly baselineCpuMsPer1000: number
  readonly rounds: number
}

const ADMIN = "bench-kafka-admin-key-0123"

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}

const run = async (eventLog: unknown, webhooks: number) => {
  const server = await startWebhookServer({ adminKey: ADMIN, encryptionKey: "77".repeat(32), eventLog })
  try {
    const acked = new Map<number, number>()
    const pid = server.proc.child.pid!
    const cpuBefore = cpuMicrosOf(pid)
    const started = Date.now()
    let next = 0
    const send = async () => {
      for (;;) {
        const i = next++
        if (i >= webhooks) return
        const body = JSON.stringify({ event: "productAdd", businessId: Number(BUSINESS), webhooksVerifyToken: TOKEN, data: { id: 1_000_000 + i, name: `bench ${i}`, price: i } })
        const r = await fetch(`${server.url}/webhooks/${APP}`, { method: "POST", headers: { "content-type": "application/json" }, body })
        await r.arrayBuffer()
        if (r.status !== 200) throw new Error(`webhook answered ${r.status}`)
        acked.set(i, Date.now())
      }
    }
    // Lag: poll sampled products while sending.
    const lags: Array<number> = []
    const sampler = (async () => {
      for (let s = 0; s < webhooks; s += Math.max(1, Math.floor(webhooks / 50))) {
        while (!acked.has(s)) await new Promise((r) => setTimeout(r, 2))
        for (;;) {
          const r = await fetch(`${server.url}/admin/tenants/${APP}/${BUSINESS}/products/${1_000_000 + s}`, { headers: { "x-admin-key": ADMIN } })
          await r.arrayBuffer()
          if (r.status === 200) break
          await new Promise((res) => setTimeout(res, 5))
        }
        lags.push(Date.now() - acked.get(s)!)
      }
    })()
    await Promise.all(Array.from({ length: 32 }, send))
    await eventually("every webhook in the read models", async () => {
      const r = await fetch(`${server.url}/admin/tenants/${APP}/${BUSINESS}`, { headers: { "x-admin-key": ADMIN } })
      const body = (await r.json()) as { counts: { products: number } }
      return body.counts.products >= webhooks ? true : undefined
    }, 300_000, 50)
    const seconds = (Date.now() - started) / 1000
    const cpuMs = (cpuMicrosOf(pid) - cpuBefore) / 1000
    await sampler
    return { recordsPerSecond: webhooks / seconds, lagP50Ms: percentile(lags, 50), lagP99Ms: percentile(lags, 99), cpuMsPer1000: (cpuMs * 1000) / webhooks }
  } finally {
    await server.proc.stop()
  }
}

export const runKafkaBench = async (options: { readonly quick?: boolean } = {}): Promise<KafkaModeResult> => {
  const webhooks = options.quick ? 2000 : 20_000
  const broker = await startBroker()
  try {
    const kafkaLog = () => ({ mode: "kafka", kafka: { brokers: broker.brokers, topic: `bench-${Date.now()}`, partitions: 6 } })
    await run(kafkaLog(), 500)
    const rounds = options.quick ? 1 : 3
    type Run = Awaited<ReturnType<typeof run>>
    const best = (a: Run | undefined, b: Run) => (a === undefined || b.recordsPerSecond > a.recordsPerSecond ? b : a)
    let kafka: Run | undefined
    let sqlite: Run | undefined
    for (let i = 0; i < rounds; i++) {
      kafka = best(kafka, await run(kafkaLog(), webhooks))
      sqlite = best(sqlite, await run({ mode: "sqlite" }, webhooks))
    }
    return {
      webhooks,
      recordsPerSecond: kafka!.recordsPerSecond,
      lagP50Ms: kafka!.lagP50Ms,
      lagP99Ms: kafka!.lagP99Ms,
      baselineRecordsPerSecond: sqlite!.recordsPerSecond,
      baselineLagP99Ms: sqlite!.lagP99Ms,
      cpuMsPer1000: kafka!.cpuMsPer1000,
      baselineCpuMsPer1000: sqlite!.cpuMsPer1000,
      rounds
    }
  } finally {
    await broker.close()
  }
}

if (import.meta.main) {
  const r = await runKafkaBench({ quick: process.argv.includes("--quick") })
  console.log(`kafka mode: ${r.webhooks} webhooks, ${r.recordsPerSecond.toFixed(0)}/s end to end, lag p50 ${r.lagP50Ms} ms p99 ${r.lagP99Ms} ms; sqlite mode ${r.baselineRecordsPerSecond.toFixed(0)}/s, lag p99 ${r.baselineLagP99Ms} ms; server CPU per 1,000 webhooks ${r.cpuMsPer1000.toFixed(0)} ms vs ${r.baselineCpuMsPer1000.toFixed(0)} ms (best of ${r.rounds} turns each)`)
  console.log(JSON.stringify({ bench: "kafka-mode", ...r }))
}
