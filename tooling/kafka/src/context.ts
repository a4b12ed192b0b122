/**
 * What globalSetup.ts hands to test files through vitest's provide/inject. Imported by
 * globalSetup.ts and testing.ts, so that any file using either sees the augmentation.
 */
declare module "vitest" {
  export interface ProvidedContext {
    /**
     * Bootstrap servers of the shared broker, comma separated ("127.0.0.1:39092"), or "" when
     * no broker could start outside CI (the suites then skip).
     */
    kafkaBrokers: string
  }
}

/** The key of the broker list in vitest's provided context. */
export const kafkaBrokersKey = "kafkaBrokers" as const
