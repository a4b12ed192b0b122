import { defineConfig } from "drizzle-kit"

// Regenerate after changing src/internal/pluginTables.ts (from the repository root):
//   ./ocs --dir packages/plugin-sdk exec drizzle-kit generate --name <what-changed>
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/internal/pluginTables.ts",
  out: "./drizzle"
})
