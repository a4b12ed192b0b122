export * as ConfigFile from "./ConfigFile.ts"
export * as Settings from "./Settings.ts"
export * as StrictKeys from "./StrictKeys.ts"
