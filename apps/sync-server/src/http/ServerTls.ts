/**
 * TLS for the sync server: the service requires an https callback URL
 * (docs/api-catalogue.md, Authentication 8), so the server can serve TLS itself from a
 * certificate and key in PEM files, without a proxy in front.
 *
 * Certificates are renewed while the server runs: on SIGHUP the files are read again and new
 * connections get the new pair (`setSecureContext`); connections already open keep theirs.
 * A pair that cannot be read or does not fit together is refused with a log line and the
 * server keeps serving the previous one.
 */
import { Effect, Queue, Schema, Stream } from "effect"
import * as Fs from "node:fs"
import type * as Https from "node:https"
import * as Tls from "node:tls"

export interface TlsFiles {
  readonly certFile: string
  readonly keyFile: string
}

/** The certificate or key could not be read, or they do not make a usable pair. */
export class TlsError extends Schema.TaggedError<TlsError>()("TlsError", {
  message: Schema.String
}) {}

export interface Credentials {
  readonly cert: Buffer
  readonly key: Buffer
}

/** Reads both files and checks that they make a context (a key that fits its certificate). */
export const read = (files: TlsFiles): Effect.Effect<Credentials, TlsError> =>
  Effect.try({
    try: () => {
      const credentials = { cert: Fs.readFileSync(files.certFile), key: Fs.readFileSync(files.keyFile) }
      Tls.createSecureContext(credentials)
      return credentials
    },
    catch: (cause) =>
      new TlsError({
        message: `TLS certificate ${files.certFile} and key ${files.keyFile} cannot be used: ${cause instanceof Error ? cause.message : String(cause)}`
      })
  })

/** SIGHUP signals for as long as the stream runs; the handler is removed with it. */
const hangups: Stream.Stream<void> = Stream.callback<void>((queue) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const onHangup = () => void Queue.offerUnsafe(queue, undefined)
      process.on("SIGHUP", onHangup)
      return onHangup
    }),
    (onHangup) => Effect.sync(() => void process.off("SIGHUP", onHangup))
  ), { bufferSize: 1, strategy: "sliding" })

/** Reloads the pair into `server` at each SIGHUP, in the current scope. */
export const reloadOnHangup = (server: Https.Server, files: TlsFiles) =>
  hangups.pipe(
    Stream.runForEach(() =>
      read(files).pipe(
        Effect.tap((credentials) => Effect.sync(() => server.setSecureContext(credentials))),
        Effect.tap(() => Effect.logInfo(`TLS certificate reloaded from ${files.certFile}`)),
        Effect.catchTag("TlsError", (e) => Effect.logError(`TLS reload refused, the previous certificate stays: ${e.message}`))
      )
    ),
    Effect.forkScoped
  )
