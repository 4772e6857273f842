/**
 * A test run is quiet: a server's log is printed only after a test of its suite that failed.
 * The fixture (`test/fixtures/quiet`) runs in a Vitest of its own, on PGlite: its passing test
 * makes the server log an expected delivery failure at WARN and ERROR, none of which is printed;
 * its failing test gets the lines its server logged meanwhile printed after it; the output ends
 * with Vitest's summary.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"

const root = fileURLToPath(new URL("..", import.meta.url))

describe("a quiet test run", () => {
  it("prints a server's log only after a test that failed, and ends with the summary", async () => {
    const { DATABASE_URL: _postgres, ...env } = process.env
    const { stdout, output } = await new Promise<{ stdout: string; output: string }>((resolve) =>
      execFile(
        "npx",
        ["vitest", "run", "--config", "test/fixtures/quiet/vitest.config.ts", "--reporter=default"],
        {
          cwd: root,
          env: { ...env, CI: "true", NO_COLOR: "1", FORCE_COLOR: "0" },
          timeout: 240_000,
          maxBuffer: 16 * 1024 * 1024
        },
        (_error, stdout, stderr) => resolve({ stdout, output: stdout + stderr })
      )
    )
    // One test passed and one failed, as the fixture means them to.
    assert.match(output, /Tests {2}1 failed \| 1 passed/, output)
    // The expected failure of the passing test was logged, but not printed.
    // (Either log format: `WAYBILL_LOG_FORMAT=json npm test` runs the fixture in JSON too.)
    assert.notMatch(
      output,
      /a delivery fails, as this test expects[^\n]*\n[^\n]*level"?[=:]"?(WARN|ERROR|warn|error)/,
      output
    )
    assert.notMatch(output, /Webhook delivery (attempt )?failed/, output)
    // The failing test's server log follows it.
    assert.match(
      output,
      /--- the log of quiet \[pglite\] during \\?"a test that fails\\?" ---[^\n]*\n[^\n]*message"?[=:]"GET \/transport-shapes 200/,
      output
    )
    // The summary closes the output (the failures' reports go to stderr, before it on a terminal).
    const lines = stdout.trimEnd().split("\n")
    assert.match(lines.at(-1)!, /Duration/, output)
  }, 300_000)
})
