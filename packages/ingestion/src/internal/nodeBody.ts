/**
 * Reads a Node request body into one buffer, stopping at a size limit: past the limit the
 * rest is not read (the answer closes the connection instead).
 */
import type * as Http from "node:http"

export type BodyResult =
  | { readonly _tag: "Body"; readonly bytes: Buffer }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "Aborted" }

const TOO_LARGE: BodyResult = { _tag: "TooLarge" }
const ABORTED: BodyResult = { _tag: "Aborted" }

export const readBody = (req: Http.IncomingMessage, limit: number, done: (result: BodyResult) => void): void => {
  const chunks: Array<Buffer> = []
  let size = 0
  let finished = false
  const finish = (result: BodyResult) => {
    if (finished) return
    finished = true
    req.removeListener("data", onData)
    req.removeListener("end", onEnd)
    req.removeListener("error", onAbort)
    req.removeListener("close", onAbort)
    if (result._tag === "TooLarge") req.pause()
    done(result)
  }
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size > limit) finish(TOO_LARGE)
    else chunks.push(chunk)
  }
  const onEnd = () => finish({ _tag: "Body", bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) })
  const onAbort = () => finish(ABORTED)
  req.on("data", onData)
  req.on("end", onEnd)
  req.on("error", onAbort)
  req.on("close", onAbort)
}
