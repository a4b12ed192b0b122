import { defineConfig } from "drizzle-kit"

// Regenerate after changing src/internal/tenantTables.ts (from the repository root):
//   ./ocs --dir packages/tenant-store exec drizzle-kit generate --name <what-changed>
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/internal/tenantTables.ts",
  out: "./drizzle"
})
