/**
 * The server turns off V8's allocation-site pretenuring (decision 0131) unless node was started
 * with a pretenuring flag of its own, in its arguments or in `NODE_OPTIONS`.
 */
import { assert, describe, it } from "@effect/vitest"
import { pretenuringChosen } from "../src/internal/heapFlags.js"

describe("pretenuringChosen", () => {
  it("is true for either pretenuring flag, in the arguments or NODE_OPTIONS, with - or _", () => {
    assert.isTrue(pretenuringChosen(["--allocation-site-pretenuring"], undefined))
    assert.isTrue(pretenuringChosen([], "--max-old-space-size=512 --no-allocation-site-pretenuring"))
    assert.isTrue(pretenuringChosen(["--trace-gc"], "  --allocation_site_pretenuring  "))
  })

  it("is false for other flags, and for a flag that only contains the name", () => {
    assert.isFalse(pretenuringChosen([], undefined))
    assert.isFalse(pretenuringChosen(["--import", "tsx", "--trace-gc"], "--max-semi-space-size=64"))
    assert.isFalse(pretenuringChosen(["--allocation-site-pretenuring-extra"], ""))
  })
})
