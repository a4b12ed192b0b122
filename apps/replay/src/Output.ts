/**
 * Where results go: stdout or an `--out` file, written with backpressure (a write that the
 * stream cannot take yet waits for "drain"), so streaming a large log keeps memory bounded.
 * Also the text formats: aligned tables and RFC 4180 CSV.
 */
import { Effect, type Scope } from "effect"
import * as NodeFs from "node:fs"
import { CommandFailed, InputFileError } from "./ReplayError.ts"

export interface Writer {
  readonly write: (text: string) => Effect.Effect<void, CommandFailed>
}

const writeTo = (stream: NodeJS.WritableStream, where: string) => {
  let failed: Error | undefined
  // A closed stdout (e.g. piped into `head`) ends the output quietly.
  let closed = false
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") closed = true
    else failed = error
  })
  const write = (text: string): Effect.Effect<void, CommandFailed> =>
    Effect.callback<void, CommandFailed>((resume) => {
      if (failed !== undefined) return resume(Effect.fail(new CommandFailed({ message: `writing ${where}: ${failed.message}`, cause: failed })))
      if (closed || text.length === 0) return resume(Effect.void)
      if (stream.write(text)) return resume(Effect.void)
      const onDrain = () => {
        stream.off("close", onDrain)
        resume(Effect.void)
      }
      stream.once("drain", onDrain)
      stream.once("close", onDrain)
    })
  return { write }
}

/**
 * Opens the output (a new or truncated file with `out`, else stdout), closed with the scope.
 * The file holds customer data: owner-only (0600), an existing file's mode tightened too.
 */
export const open = Effect.fnUntraced(function*(out: string | undefined): Effect.fn.Return<Writer, InputFileError, Scope.Scope> {
  if (out === undefined) return writeTo(process.stdout, "stdout")
  const file = yield* Effect.acquireRelease(
    Effect.try({
      try: () => {
        const fd = NodeFs.openSync(out, "w", 0o600)
        NodeFs.fchmodSync(fd, 0o600)
        return NodeFs.createWriteStream(out, { flags: "w", fd })
      },
      catch: (cause) => new InputFileError({ filename: out, message: `cannot write ${out}: ${cause instanceof Error ? cause.message : String(cause)}` })
    }),
    (stream) => Effect.callback<void>((resume) => {
      stream.end(() => resume(Effect.void))
    })
  )
  return writeTo(file, out)
})

/** RFC 4180: quote a field holding a comma, quote, CR or LF (or edge spaces); double the quotes. */
export const csvField = (value: unknown): string => {
  if (value === null || value === undefined) return ""
  const text = typeof value === "string" ? value : typeof value === "bigint" ? value.toString() : String(value)
  return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export const csvLine = (values: ReadonlyArray<unknown>): string => `${values.map(csvField).join(",")}\r\n`

/** One line of a cell: newlines shown as ⏎, cut at `max` characters. */
export const cell = (value: unknown, max = 60): string => {
  const text = value === null || value === undefined ? "" : String(value).replace(/\r?\n/g, "⏎")
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

/** An aligned text table (for small results: summaries, stats, differences). */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<unknown>>): string => {
  const cells = [header.map((h) => cell(h, 200)), ...rows.map((r) => r.map((v) => cell(v, 200)))]
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]?.length ?? 0)))
  const right = rows.length > 0 ? rows[0]!.map((v) => typeof v === "number") : []
  return cells.map((r, n) =>
    r.map((c, i) => (right[i] === true && n > 0 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join("  ").trimEnd()
  ).join("\n")
}

export const iso = (ms: number): string => {
  const d = new Date(ms)
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString()
}
