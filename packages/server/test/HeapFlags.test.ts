/**
 * The server turns off V8's allocation-site pretenuring (decision 0131) unless node was started
 * with a pretenuring flag of its own.
 */
import { execFileSync } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import { pretenuringChosen } from "../src/internal/heapFlags.js"

describe("pretenuringChosen", () => {
  it("is true for either pretenuring flag among node's arguments, with - or _", () => {
    assert.isTrue(pretenuringChosen(["--allocation-site-pretenuring"]))
    assert.isTrue(pretenuringChosen(["--max-old-space-size=512", "--no-allocation-site-pretenuring"]))
    assert.isTrue(pretenuringChosen(["--trace-gc", "--allocation_site_pretenuring"]))
  })

  it("is false for other flags, and for a flag that only contains the name", () => {
    assert.isFalse(pretenuringChosen([]))
    assert.isFalse(pretenuringChosen(["--import", "tsx", "--trace-gc", "--max-semi-space-size=64"]))
    assert.isFalse(pretenuringChosen(["--allocation-site-pretenuring-extra"]))
  })

  it("sees the flag in process.execArgv, where node puts it", () => {
    const argv = execFileSync(
      process.execPath,
      ["--no-allocation-site-pretenuring", "-p", "JSON.stringify(process.execArgv)"],
      {
        encoding: "utf8"
      }
    )
    assert.isTrue(pretenuringChosen(JSON.parse(argv)))
  })
})
