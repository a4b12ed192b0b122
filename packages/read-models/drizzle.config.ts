import { defineConfig } from "drizzle-kit"

// Regenerate after changing src/Tables.ts (from the repository root):
//   ./ocs --dir packages/read-models exec drizzle-kit generate --name <what-changed>
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/Tables.ts",
  out: "./drizzle"
})
