/**
 * The `readModels` section of a server's configuration: where the server keeps the copy it
 * serves (docs/architecture.md §4.34, docs/postgres.md). `sqlite`, the default, is the file in
 * the data folder; `postgres` projects into a PostgreSQL schema as well, and the admin API's read
 * routes (and so the console) answer from it. Schema only: reading this section loads no client.
 */
import { Schema } from "effect"

export const PostgresSection = Schema.Struct({
  /** `postgres://user:password@host:port/database`. */
  url: Schema.String.check(Schema.isPattern(/^postgres(ql)?:\/\//)),
  /** The schema that holds the tables (created and migrated at start). Default `ocs_read_models`. */
  schema: Schema.optional(Schema.String.check(Schema.isPattern(/^[a-z_][a-z0-9_]{0,62}$/))),
  /** Connections in the pool. Default 4. */
  pool: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 })))
})
export type PostgresSection = typeof PostgresSection.Type

export const Section = Schema.Struct({
  store: Schema.optional(Schema.Literals(["sqlite", "postgres"])),
  postgres: Schema.optional(PostgresSection)
}).check(Schema.makeFilter((section: { readonly store?: string | undefined; readonly postgres?: unknown }) =>
  section.store !== "postgres" || section.postgres !== undefined || "readModels.store postgres needs readModels.postgres.url"
))
export type Section = typeof Section.Type

/** The PostgreSQL settings when the section chooses PostgreSQL, else undefined (SQLite only). */
export const postgresOf = (section: Section | undefined): PostgresSection | undefined =>
  section?.store === "postgres" ? section.postgres : undefined
