export * as HeapProfile from "./HeapProfile.ts"
export * as LoopHealth from "./LoopHealth.ts"
export * as ServerMetrics from "./ServerMetrics.ts"
export * as Telemetry from "./Telemetry.ts"
