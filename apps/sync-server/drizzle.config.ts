import { defineConfig } from "drizzle-kit"

// Regenerate after changing src/tenants/TenantTables.ts (from the repository root):
//   ./ocs --dir apps/sync-server exec drizzle-kit generate --name <what-changed>
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/tenants/TenantTables.ts",
  out: "./drizzle"
})
