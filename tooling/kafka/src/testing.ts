/**
 * Helpers for test files of a vitest project whose globalSetup is
 * `tooling/kafka/src/globalSetup.ts`:
 *
 *   import { describe, it } from "vitest"
 *   import { kafkaBrokers, kafkaUnavailable } from "@ocs/kafka-broker/testing"
 *
 *   describe.skipIf(kafkaUnavailable())("orders topic", () => {
 *     it("round-trips", async () => { const kafka = new Kafka({ brokers: [...kafkaBrokers()] }) ... })
 *   })
 *
 * Under CI=true globalSetup fails the run instead of providing "", so nothing skips there.
 */
import { inject, type TestContext } from "vitest"
import { kafkaBrokersKey } from "./context.ts"

const provided = (): string => {
  const value = inject(kafkaBrokersKey)
  if (typeof value !== "string") {
    throw new Error(
      "kafkaBrokers was not provided: add tooling/kafka/src/globalSetup.ts to this vitest project's `globalSetup`"
    )
  }
  return value
}

/** True when no broker is available (outside CI, without Java or Maven): skip the suite. */
export const kafkaUnavailable = (): boolean => provided() === ""

/** The shared broker's bootstrap servers; empty when kafkaUnavailable(). */
export const kafkaBrokers = (): ReadonlyArray<string> => {
  const value = provided()
  return value === "" ? [] : value.split(",")
}

/** The bootstrap servers, or a skip of the current test when there is no broker (outside CI). */
export const kafkaBrokersOrSkip = (context: Pick<TestContext, "skip">): ReadonlyArray<string> => {
  const brokers = kafkaBrokers()
  if (brokers.length === 0) context.skip("no Kafka broker (see the kafka-broker warning above)")
  return brokers
}
