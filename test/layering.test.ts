/**
 * The layering check (`npm run layering`, dependency-cruiser with `.dependency-cruiser.cjs`)
 * fails on each kind of violation: a tree with one of each planted is checked with the
 * project's own configuration, and every planted import is reported under its rule, while the
 * clean module beside them is not.
 */
import { execFile } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, it } from "@effect/vitest"

const root = fileURLToPath(new URL("..", import.meta.url))
const cruiser = join(root, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs")

interface Violation {
  readonly from: string
  readonly to: string
  readonly rule: { readonly name: string }
}

const planted: Record<string, string> = {
  // A domain package reaching for HTTP, SQL and the network.
  "packages/webhooks/src/Planted.ts": `import * as Http from "node:http"\nimport * as Pg from "pg"\nexport const planted = [Http, Pg]\n`,
  // An import upward: core is the bottom of the graph.
  "packages/core/src/Upward.ts": `import { fromWebhooks } from "../../webhooks/src/Clean.js"\nexport const upward = fromWebhooks\n`,
  // Another package's internal module.
  "packages/store-pg/src/Reach.ts": `import { secret } from "../../webhooks/src/internal/secret.js"\nexport const reach = secret\n`,
  "packages/webhooks/src/internal/secret.ts": `export const secret = 1\n`,
  // A cycle through a type-only import.
  "packages/drafts/src/Left.ts": `import type { Right } from "./Right.js"\nexport interface Left { readonly right?: Right }\n`,
  "packages/drafts/src/Right.ts": `import type { Left } from "./Left.js"\nexport interface Right { readonly left?: Left }\n`,
  // Clean: a domain module importing effect and its own package.
  "packages/webhooks/src/Clean.ts": `import * as Effect from "effect/Effect"\nimport { secret } from "./internal/secret.js"\nexport const fromWebhooks = Effect.succeed(secret)\n`
}

const cruise = (cwd: string) =>
  new Promise<ReadonlyArray<Violation>>((resolve, reject) => {
    execFile(
      process.execPath,
      [cruiser, "--config", join(root, ".dependency-cruiser.cjs"), "--output-type", "json", "packages"],
      { cwd, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) => {
        // It exits non-zero when it finds violations; the report is on stdout either way.
        try {
          resolve(JSON.parse(stdout).summary.violations as ReadonlyArray<Violation>)
        } catch (cause) {
          reject(error ?? cause)
        }
      }
    )
  })

describe("layering check", () => {
  const dir = mkdtempSync(join(tmpdir(), "waybill-layering-"))
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it("fails on every kind of planted violation and passes the clean module", { timeout: 60_000 }, async () => {
    for (const [path, text] of Object.entries(planted)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true })
      writeFileSync(join(dir, path), text)
    }
    copyFileSync(join(root, "tsconfig.base.json"), join(dir, "tsconfig.base.json"))
    // `pg` and `effect` resolve from the project's own node_modules.
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "planted", private: true, type: "module" }))
    symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir")
    const violations = await cruise(dir)
    const found = violations.map((violation) => `${violation.rule.name} ${violation.from} -> ${violation.to}`)
    const expect = (rule: string, from: string, to: string) =>
      assert.isTrue(
        violations.some(
          (violation) => violation.rule.name === rule && violation.from === from && violation.to.includes(to)
        ),
        `${rule}: ${from} -> ${to} not reported; found:\n${found.join("\n")}`
      )
    expect("domain-is-pure", "packages/webhooks/src/Planted.ts", "http")
    expect("domain-is-pure", "packages/webhooks/src/Planted.ts", "pg")
    expect("downward-only-core", "packages/core/src/Upward.ts", "packages/webhooks/src/Clean.ts")
    expect("no-internal-across-packages", "packages/store-pg/src/Reach.ts", "packages/webhooks/src/internal/secret.ts")
    expect("no-circular", "packages/drafts/src/Left.ts", "packages/drafts/src/Right.ts")
    assert.deepStrictEqual(
      violations.filter((violation) => violation.from === "packages/webhooks/src/Clean.ts"),
      [],
      found.join("\n")
    )
  })
})
