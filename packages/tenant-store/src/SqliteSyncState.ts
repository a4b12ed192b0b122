/**
 * The sync state (`@ocs/sync` SyncStateStore) in the tenant store's file, table
 * `resource_state`: one row per tenant and resource, created at its first read or write.
 */
import type Database from "better-sqlite3"
import { Effect, Layer } from "effect"
import { SyncState } from "@ocs/sync"
import { TenantDatabase, type TenantStoreError } from "./TenantDatabase.ts"
import { type StateRow, toState } from "./internal/tenantRows.ts"

// A patch sets a few of these columns: one statement per set of columns, prepared the first
// time that set is used (a handful exist: what the sync engine writes together).
const patchColumns = {
  cursor: "cursor",
  fullStartedAt: "full_started_at",
  fullCompletedAt: "full_completed_at",
  windowEnd: "window_end",
  incrementalBound: "incremental_bound",
  lastRunAt: "last_run_at",
  lastError: "last_error"
} as const

const unavailable = (e: TenantStoreError) => new SyncState.SyncStateUnavailable({ message: e.message })

export const layer: Layer.Layer<SyncState.SyncStateStore, TenantStoreError, TenantDatabase> = Layer.effect(
  SyncState.SyncStateStore,
  Effect.flatMap(TenantDatabase, (file) =>
    file.run("prepare", () => {
      const db = file.client
      const s = {
        ensure: db.prepare<[string, string, string]>("INSERT OR IGNORE INTO resource_state (app_id, business_id, resource) VALUES (?, ?, ?)"),
        state: db.prepare<[string, string, string], StateRow>("SELECT * FROM resource_state WHERE app_id = ? AND business_id = ? AND resource = ?"),
        states: db.prepare<[{ appId: string | null; businessId: string | null }], StateRow>(
          "SELECT * FROM resource_state WHERE (@appId IS NULL OR app_id = @appId) AND (@businessId IS NULL OR business_id = @businessId) ORDER BY app_id, business_id, resource"
        ),
        pause: db.prepare<[string | null, string | null, number | null, string, string, string]>(
          "UPDATE resource_state SET paused_code = ?, paused_message = ?, paused_at = ? WHERE app_id = ? AND business_id = ? AND resource = ?"
        )
      }
      const patchStatements = new Map<string, Database.Statement<Array<unknown>>>()
      const patchStatement = (sets: ReadonlyArray<string>) => {
        const sql = `UPDATE resource_state SET ${sets.join(", ")} WHERE app_id = ? AND business_id = ? AND resource = ?`
        let statement = patchStatements.get(sql)
        if (statement === undefined) {
          statement = db.prepare<Array<unknown>>(sql)
          patchStatements.set(sql, statement)
        }
        return statement
      }
      return SyncState.SyncStateStore.of({
        state: (appId, businessId, resource) =>
          Effect.mapError(
            file.run("read sync state", () => {
              s.ensure.run(appId, businessId, resource)
              return toState(s.state.get(appId, businessId, resource)!)
            }),
            unavailable
          ),
        states: (appId, businessId) =>
          Effect.mapError(file.run("list sync state", () => s.states.all({ appId: appId ?? null, businessId: businessId ?? null }).map(toState)), unavailable),
        update: (appId, businessId, resource, patch) =>
          Effect.mapError(
            file.run("update sync state", () => {
              s.ensure.run(appId, businessId, resource)
              const sets: Array<string> = []
              const values: Array<unknown> = []
              for (const [field, column] of Object.entries(patchColumns)) {
                const value = patch[field as keyof typeof patchColumns]
                if (value !== undefined) {
                  sets.push(`${column} = ?`)
                  values.push(value)
                }
              }
              if (patch.addPages !== undefined) {
                sets.push("pages = pages + ?")
                values.push(Math.trunc(patch.addPages))
              }
              if (patch.addRecords !== undefined) {
                sets.push("records = records + ?")
                values.push(Math.trunc(patch.addRecords))
              }
              if (sets.length === 0) return
              patchStatement(sets).run(...values, appId, businessId, resource)
            }),
            unavailable
          ),
        pause: (appId, businessId, resource, reason) =>
          Effect.mapError(
            file.runAt("pause resource", (now) => {
              s.ensure.run(appId, businessId, resource)
              s.pause.run(reason?.code ?? null, reason?.message ?? null, reason === null ? null : now, appId, businessId, resource)
            }),
            unavailable
          )
      })
    }))
)
