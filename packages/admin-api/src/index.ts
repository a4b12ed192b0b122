export * as AdminDocs from "./AdminDocs.ts"
export * as AdminInputs from "./AdminInputs.ts"
export * as AdminRoutes from "./AdminRoutes.ts"
