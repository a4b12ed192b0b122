import { assert, describe, it } from "@effect/vitest"
import { version } from "@ocs/protocol"
describe("smoke", () => { it("version", () => assert.strictEqual(version, "3.0")) })
