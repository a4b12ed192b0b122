/**
 * What globalSetup.ts hands to test files through vitest's provide/inject. Imported by
 * globalSetup.ts and testing.ts, so that any file using either sees the augmentation.
 */
declare module "vitest" {
  export interface ProvidedContext {
    /**
     * The shared server's superuser URL (postgres://postgres@127.0.0.1:<port>/postgres), or ""
     * when no server could start outside CI (the suites then skip).
     */
    postgresUrl: string
  }
}

/** The key of the server's URL in vitest's provided context. */
export const postgresUrlKey = "postgresUrl" as const
