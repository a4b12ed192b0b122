import { defineConfig } from "drizzle-kit"

// Regenerate after changing src/internal/rateLimitTables.ts (from the repository root):
//   ./ocs --dir packages/transport exec drizzle-kit generate --name <what-changed>
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/internal/rateLimitTables.ts",
  out: "./drizzle"
})
