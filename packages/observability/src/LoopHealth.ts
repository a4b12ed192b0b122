/**
 * The background loops of the server (projection, tenant activity, tenant watch, sync
 * supervisor) and their health. A loop that fails is never left dead in silence: the failure is
 * logged with the loop's name and cause, the loop is restarted after a capped, jittered
 * exponential backoff, and its state (up or down, restarts, last error, since when) is what
 * `/metrics` and `/readyz` show.
 *
 * A restarted loop counts as up only once it has run `settleMillis` without failing again:
 * a loop that fails at once on every restart (a full disk) stays down instead of flapping.
 *
 * A loop that retries inside itself (the Kafka relay backs off while the broker refuses it)
 * never fails to its supervisor; `watch` gives it a check of its own, and while the check names
 * a problem the loop is down with that problem.
 */
import { Cause, Clock, Context, Effect, Layer, Schedule, Schema } from "effect"

export class LoopFailed extends Schema.TaggedError<LoopFailed>()("LoopFailed", {
  loop: Schema.String,
  message: Schema.String
}) {}

export interface LoopStatus {
  readonly name: string
  readonly up: boolean
  readonly restarts: number
  readonly lastError: string | null
  /** Since when (ms epoch) the loop has been in its current state. */
  readonly since: number
  /** What the loop's own check (`watch`) reports wrong while it runs; null when nothing. */
  readonly problem: string | null
}

/** A running loop's own account of a problem: what, and since when (ms epoch). */
export interface LoopProblem {
  readonly problem: string
  readonly since: number
}

export interface LoopHealthOptions {
  /** First restart delay. Default 200 ms. */
  readonly baseDelayMillis?: number | undefined
  /** Restart delays grow up to this (before jitter). Default 10 s. */
  readonly maxDelayMillis?: number | undefined
  /** A restarted loop is up once it ran this long. Default 2 s. */
  readonly settleMillis?: number | undefined
}

interface State {
  readonly name: string
  running: boolean
  startedAt: number
  restarts: number
  lastError: string | null
  downSince: number
}

export interface LoopHealthService {
  /** Runs `loop` for ever (until interrupted), restarting it after each failure or end. */
  readonly supervise: <R>(name: string, loop: Effect.Effect<unknown, unknown, R>) => Effect.Effect<never, never, R>
  readonly snapshot: Effect.Effect<ReadonlyArray<LoopStatus>>
  /** Adds a check to the loop `name`: while it reports a problem, the loop is down with it. */
  readonly watch: (name: string, check: Effect.Effect<LoopProblem | undefined>) => void
}

/** One line of a cause, for the status (the log gets the whole cause). */
const summary = (cause: Cause.Cause<unknown>) => {
  const e = Cause.squash(cause)
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e)
  return text.length > 300 ? `${text.slice(0, 300)}...` : text
}

export const make = (options: LoopHealthOptions = {}): LoopHealthService => {
  const settle = options.settleMillis ?? 2000
  const states = new Map<string, State>()
  const checks = new Map<string, Effect.Effect<LoopProblem | undefined>>()
  const backoff = Schedule.min([
    Schedule.exponential(options.baseDelayMillis ?? 200),
    Schedule.spaced(options.maxDelayMillis ?? 10_000)
  ]).pipe(Schedule.jittered)

  const isUp = (s: State, now: number) => s.running && (s.restarts === 0 || now - s.startedAt >= settle)

  const supervise = <R>(name: string, loop: Effect.Effect<unknown, unknown, R>): Effect.Effect<never, never, R> => {
    const state: State = { name, running: false, startedAt: 0, restarts: 0, lastError: null, downSince: 0 }
    states.set(name, state)
    const attempt = Effect.gen(function*() {
      state.running = true
      state.startedAt = yield* Clock.currentTimeMillis
      yield* loop
      // A loop is meant to run until interrupted: ending is as wrong as failing.
      return yield* new LoopFailed({ loop: name, message: "the loop ended" })
    }).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause as Cause.Cause<never>)
          : Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            if (isUp(state, now) || state.restarts === 0) state.downSince = now
            state.running = false
            state.restarts++
            state.lastError = summary(cause)
            yield* Effect.logError(`loop ${name} failed; restarting it after a backoff`, cause).pipe(
              Effect.annotateLogs({ loop: name, restarts: state.restarts })
            )
            return yield* new LoopFailed({ loop: name, message: state.lastError })
          })
      )
    )
    return attempt.pipe(
      Effect.retry(backoff),
      // Unreachable (the schedule never ends); typed as never for the caller.
      Effect.andThen(Effect.never),
      Effect.catch(() => Effect.never)
    )
  }

  const snapshot = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    return yield* Effect.forEach([...states.values()], (s) =>
      Effect.map(checks.get(s.name) ?? Effect.undefined, (reported): LoopStatus => {
        const running = isUp(s, now)
        const problem = running ? reported : undefined
        return {
          name: s.name,
          up: running && problem === undefined,
          restarts: s.restarts,
          lastError: s.lastError,
          since: problem !== undefined ? problem.since : running ? (s.restarts === 0 ? s.startedAt : s.startedAt + settle) : s.downSince,
          problem: problem?.problem ?? null
        }
      }))
  })

  const watch = (name: string, check: Effect.Effect<LoopProblem | undefined>) => {
    checks.set(name, check)
  }

  return { supervise, snapshot, watch }
}

export class LoopHealth extends Context.Service<LoopHealth, LoopHealthService>()("@ocs/observability/LoopHealth") {
  static readonly layer = (options?: LoopHealthOptions): Layer.Layer<LoopHealth> => Layer.sync(LoopHealth, () => make(options))
}
