/**
 * The console's form starts each kind from an example (console/src/command-examples.ts): every
 * kind the engine takes is offered, and every example passes its kind's Schema as the admin
 * route checks it, so a person starts from a payload the server accepts.
 */
import { Command } from "@ocs/commands"
import { CommandKind } from "@ocs/protocol"
import { Result } from "effect"
import { assert, describe, it } from "vitest"
import { example, KINDS } from "../../console/src/command-examples.ts"

describe("the command form's examples", () => {
  it("offer every kind the engine takes, each a payload its Schema accepts", () => {
    assert.deepStrictEqual([...KINDS].sort(), [...CommandKind.names].sort())
    for (const kind of KINDS) {
      const checked = Command.validate(kind, example(kind, "A1B2"))
      assert.isTrue(Result.isSuccess(checked), `${kind}: ${Result.isFailure(checked) ? JSON.stringify(checked.failure.issues) : ""}`)
    }
  })

  it("make the keys the service keeps unique fresh each time", () => {
    const keys = (fresh: string) => {
      const p = example("product.add", fresh) as { appProductId: string }
      const o = example("order.add", fresh) as { channel: { appOrderId: string } }
      return [p.appProductId, o.channel.appOrderId]
    }
    const [a, b] = [keys("AAAA"), keys("BBBB")]
    for (let i = 0; i < a.length; i++) assert.notStrictEqual(a[i], b[i])
  })
})
