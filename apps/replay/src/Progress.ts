/**
 * Progress on stderr while a long command reads the log: a redrawn bar (records/s, ETA) when
 * stderr is a terminal, else a plain line every few seconds (logs, CI, pipes; no bar drawn, no
 * control characters), and a final line.
 */
import { Effect, type Scope } from "effect"

export type Mode = "auto" | "bar" | "plain" | "none"

export interface Progress {
  /** Records done so far (call as they pass). */
  readonly add: (n: number) => void
  /** Draws the final state and ends the bar's line. */
  readonly finish: Effect.Effect<void>
}

export interface Options {
  readonly label: string
  /** Records expected (undefined: unknown, no percentage or ETA). */
  readonly total: number | undefined
  readonly mode: Mode
  /** Plain mode: one line per interval (default 5 s). */
  readonly plainIntervalMillis?: number | undefined
  readonly stream?: NodeJS.WriteStream | undefined
}

const int = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 })

export const duration = (seconds: number): string => {
  if (!Number.isFinite(seconds)) return "?"
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)}s`
  const m = Math.floor(seconds / 60)
  const s = Math.round(seconds % 60)
  return m < 60 ? `${m}m${String(s).padStart(2, "0")}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`
}

/**
 * One progress line (exported for tests of the format). `bar: false` (plain mode: logs, CI,
 * pipes) leaves out the drawn bar and the padding a redrawn line needs.
 */
export const line = (label: string, done: number, total: number | undefined, elapsedSeconds: number, width = 24, bar = true): string => {
  const rate = elapsedSeconds > 0 ? done / elapsedSeconds : 0
  const parts = [label]
  if (total !== undefined && total > 0) {
    const ratio = Math.min(1, done / total)
    const filled = Math.round(ratio * width)
    if (bar) parts.push(`[${"#".repeat(filled)}${"-".repeat(width - filled)}]`)
    parts.push(bar ? `${(ratio * 100).toFixed(1).padStart(5)}%` : `${(ratio * 100).toFixed(1)}%`, `${int.format(done)}/${int.format(total)} records`)
  } else {
    parts.push(`${int.format(done)} records`)
  }
  parts.push(`${int.format(rate)} records/s`)
  if (total !== undefined && total > 0) parts.push(`ETA ${rate > 0 ? duration(Math.max(0, total - done) / rate) : "?"}`)
  parts.push(`elapsed ${duration(elapsedSeconds)}`)
  return parts.join("  ")
}

export const start = Effect.fnUntraced(function*(options: Options): Effect.fn.Return<Progress, never, Scope.Scope> {
  const stream = options.stream ?? process.stderr
  const mode = options.mode === "auto" ? (stream.isTTY ? "bar" : "plain") : options.mode
  const started = performance.now()
  let done = 0
  let finished = false
  const elapsed = () => (performance.now() - started) / 1000
  const draw = (final: boolean) => {
    const text = line(options.label, done, final ? (options.total === undefined ? undefined : Math.max(done, options.total)) : options.total, elapsed(), 24, mode === "bar")
    if (mode === "bar") stream.write(`\r${text}\x1b[K${final ? "\n" : ""}`)
    else if (mode === "plain") stream.write(`${text}${final ? "  done" : ""}\n`)
  }
  if (mode !== "none") {
    const interval = mode === "bar" ? 200 : options.plainIntervalMillis ?? 5000
    yield* Effect.forkScoped(Effect.forever(Effect.andThen(Effect.sleep(interval), Effect.sync(() => {
      if (!finished) draw(false)
    }))))
  }
  return {
    add: (n) => {
      done += n
    },
    finish: Effect.sync(() => {
      if (finished) return
      finished = true
      if (mode !== "none") draw(true)
    })
  }
})
