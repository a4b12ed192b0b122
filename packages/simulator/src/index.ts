/**
 * @ocs/simulator: a faithful fake of the Open Commerce Service API v3.0 (POS and Vpage),
 * with its webhook sender, rate limits, control API and fault injection. It is a program
 * speaking HTTP; other packages use only this surface and the HTTP API.
 *
 * ```ts
 * const sim = await startSimulator({ port: 0 })
 * const { appId, businessId, accessToken } = sim.demo!
 * await fetch(`${sim.posBaseUrl}/v3.0/product/list?appId=${appId}&businessId=${businessId}`, {
 *   method: "POST", headers: { Authorization: accessToken, "content-type": "application/json" }, body: "{}"
 * })
 * await sim.control.addFault({ kind: "status", status: 503, count: 1 })
 * await sim.close()
 * ```
 */
export * as Simulator from "./Simulator.ts"
export { startSimulator } from "./Simulator.ts"
export type { DemoInfo, RunningSimulator, SimulatorHandle, SimulatorOptions } from "./Simulator.ts"
export { SimulatorControl, SimulatorControlError } from "./SimulatorControl.ts"
export type * as SimulatorControlTypes from "./SimulatorControl.ts"
export { EVENT_IDS } from "./Webhooks.ts"
export { DEPRECATION_ORDER_PRIVATE_ID } from "./Listers.ts"
export { RATE_LIMIT_MESSAGE } from "./Api.ts"
