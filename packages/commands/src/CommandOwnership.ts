/**
 * Several servers sharing one ledger (docs/architecture.md §4.31): which tenants' commands this
 * server sends now. Given, the engine runs shared: it follows the log's command records (every
 * server sees every command and its state), decides an idempotency key by the first request
 * the log holds for it, and sends only the commands of the tenants it owns, each attempt fenced
 * through the log. Absent: the engine is alone and owns every tenant.
 *
 * The host gives it (the sync server: its pulls' `Ownership`, a consumer group over the
 * tenants); `owns` is asked often and must answer at once.
 */
import { Context } from "effect"
import type { Ids } from "@ocs/protocol"

export class CommandOwnership extends Context.Service<CommandOwnership, {
  /** True when this server sends the tenant's commands now. */
  readonly owns: (tenant: Ids.TenantRef) => boolean
}>()("@ocs/commands/CommandOwnership") {}
