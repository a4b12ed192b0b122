/**
 * Writes docs/admin-api.md from the admin reference (@ocs/admin-api AdminRoutes). Run it after
 * changing a route: `./ocs --filter @ocs/sync-server docs:admin-api`.
 */
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import { markdown } from "@ocs/admin-api/AdminDocs"

const target = fileURLToPath(new URL("../../../docs/admin-api.md", import.meta.url))
Fs.writeFileSync(target, markdown())
console.log(`wrote ${target}`)
