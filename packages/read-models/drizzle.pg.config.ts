import { defineConfig } from "drizzle-kit"

// The read models in PostgreSQL (docs/architecture.md §4.34): src/postgres/Tables.ts generates
// them from the SQLite declaration, so regenerate both after changing src/Tables.ts or a
// projection's table (from the repository root):
//   ./ocs --dir packages/read-models exec drizzle-kit generate --config drizzle.pg.config.ts --name <what-changed>
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/postgres/Tables.ts",
  out: "./drizzle-pg"
})
