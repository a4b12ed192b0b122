/**
 * The `commands` section of a server's configuration (seconds, as an operator writes them) and
 * the engine's options built from it. Only what an operator tunes is here; the rest of
 * `CommandEngine.Options` keeps its defaults.
 */
import { Schema } from "effect"
import type { Options } from "./CommandEngine.ts"

const PositiveNumber = Schema.Finite.check(Schema.isGreaterThan(0))

export const Section = Schema.Struct({
  /**
   * How long a command the service answered as applied may take to show in the copy (webhook
   * or pull) before a targeted read decides: seen, or flagged `notSeen` (docs/architecture.md
   * §4.31, "Confirmation"). Default 120.
   */
  seenWithinSeconds: Schema.optional(PositiveNumber)
})
export type Section = typeof Section.Type

/** The engine's options from the section (absent: every default). */
export const fromSection = (section: Section | undefined): Options =>
  section?.seenWithinSeconds === undefined ? {} : { seenWithinMs: Math.round(section.seenWithinSeconds * 1000) }
