/**
 * Reads a Node request body into one buffer, stopping at a size limit: past the limit the
 * rest is not read (the answer closes the connection instead). A `watch` sees the body as it
 * arrives and may stop the read early with an answer of its own (the receiver's token check
 * and memory budget for bodies that have not proved a token, ./unverified.ts).
 */
import type * as Http from "node:http"

export type BodyResult<A> =
  | { readonly _tag: "Body"; readonly bytes: Buffer }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "Aborted" }
  /** The watch stopped the read; `answer` is its. */
  | { readonly _tag: "Stopped"; readonly answer: A }

export interface Watch<A> {
  /**
   * After each chunk: `added` bytes, `size` so far, `bytes()` the body so far as one buffer
   * (joined on demand and kept joined). An answer stops the read.
   */
  readonly chunk: (added: number, size: number, bytes: () => Buffer) => A | undefined
  /** Once, however the read ended: give back what the watch holds. */
  readonly release: () => void
}

const TOO_LARGE = { _tag: "TooLarge" } as const
const ABORTED = { _tag: "Aborted" } as const

export const readBody = <A>(
  req: Http.IncomingMessage,
  limit: number,
  watch: Watch<A> | undefined,
  done: (result: BodyResult<A>) => void
): void => {
  const chunks: Array<Buffer> = []
  let size = 0
  let finished = false
  const joined = (): Buffer => {
    if (chunks.length !== 1) {
      const one = Buffer.concat(chunks, size)
      chunks.length = 0
      chunks.push(one)
    }
    return chunks[0] ?? Buffer.alloc(0)
  }
  const finish = (result: BodyResult<A>) => {
    if (finished) return
    finished = true
    req.removeListener("data", onData)
    req.removeListener("end", onEnd)
    req.removeListener("error", onAbort)
    req.removeListener("close", onAbort)
    if (result._tag === "TooLarge" || result._tag === "Stopped") req.pause()
    // Nothing of a refused or abandoned body is kept past this point.
    if (result._tag !== "Body") chunks.length = 0
    watch?.release()
    done(result)
  }
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size > limit) return finish(TOO_LARGE)
    chunks.push(chunk)
    if (watch === undefined) return
    const stop = watch.chunk(chunk.length, size, joined)
    if (stop !== undefined) finish({ _tag: "Stopped", answer: stop })
  }
  const onEnd = () => finish({ _tag: "Body", bytes: joined() })
  const onAbort = () => finish(ABORTED)
  req.on("data", onData)
  req.on("end", onEnd)
  req.on("error", onAbort)
  req.on("close", onAbort)
}
