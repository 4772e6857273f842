/**
 * Versions and changelogs, kept with changesets as Effect's packages are: every publishable
 * package has a changelog whose newest entry is its version, every one is in the one fixed group,
 * and a changeset for one package, versioned in a copy of the repository's manifests, raises
 * every package (and the exact versions they require of each other) together.
 */
import { execFile } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { packageDirectories } from "../scripts/pack.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const work = mkdtempSync(join(tmpdir(), "waybill-release-"))
afterAll(() => rm(work, { recursive: true, force: true }))

interface Manifest {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly dependencies?: Record<string, string>
  readonly publishConfig?: { readonly access?: string }
  readonly repository?: { readonly url?: string; readonly directory?: string }
}

const manifest = (directory: string, base = root) =>
  JSON.parse(readFileSync(join(base, directory, "package.json"), "utf8")) as Manifest
const publishable = packageDirectories()

describe("releases", () => {
  it("every package has a changelog whose newest entry is its version, and what the registry needs", () => {
    assert.strictEqual(publishable.length, 12)
    for (const directory of publishable) {
      const { name, version, publishConfig, repository } = manifest(directory)
      const changelog = readFileSync(join(root, directory, "CHANGELOG.md"), "utf8")
      assert.match(changelog, new RegExp(`^# ${name}\\n\\n## ${version.replaceAll(".", "\\.")}\\n`), directory)
      assert.deepStrictEqual(publishConfig, { access: "public" }, directory)
      assert.strictEqual(repository?.directory, directory, directory)
      assert.strictEqual(repository?.url, "git+https://github.com/waybill/waybill.git", directory)
      assert.strictEqual(
        readFileSync(join(root, directory, "LICENSE"), "utf8"),
        readFileSync(join(root, "LICENSE"), "utf8")
      )
    }
    const config = JSON.parse(readFileSync(join(root, ".changeset/config.json"), "utf8")) as {
      fixed: ReadonlyArray<ReadonlyArray<string>>
      access: string
    }
    assert.deepStrictEqual(config.fixed, [["@waybill/*"]])
    assert.strictEqual(config.access, "public")
  })

  it("a changeset for one package, versioned, raises every package and their exact requirements together", async () => {
    // A copy of what changesets reads: the manifests, the changelogs and its configuration (not
    // the changesets waiting for the next release, which would raise the version by their bump).
    cpSync(join(root, "package.json"), join(work, "package.json"))
    mkdirSync(join(work, ".changeset"), { recursive: true })
    cpSync(join(root, ".changeset/config.json"), join(work, ".changeset/config.json"))
    const directories = [...publishable, "examples/embed", "examples/receiver"]
    for (const directory of directories) {
      mkdirSync(join(work, directory), { recursive: true })
      cpSync(join(root, directory, "package.json"), join(work, directory, "package.json"))
      if (publishable.includes(directory))
        cpSync(join(root, directory, "CHANGELOG.md"), join(work, directory, "CHANGELOG.md"))
    }
    writeFileSync(
      join(work, ".changeset/signing-names-the-header.md"),
      '---\n"@waybill/signing": patch\n---\n\nVerifying a signature names the header that is missing.\n'
    )
    await promisify(execFile)(join(root, "node_modules/.bin/changeset"), ["version"], { cwd: work })
    const [major, minor, patch] = manifest(publishable[0]!).version.split(".").map(Number)
    const next = `${major}.${minor}.${patch! + 1}`
    for (const directory of publishable) {
      const after = manifest(directory, work)
      assert.strictEqual(after.version, next, directory)
      for (const [dependency, range] of Object.entries(after.dependencies ?? {})) {
        if (dependency.startsWith("@waybill/")) assert.strictEqual(range, next, `${directory}: ${dependency}`)
      }
      assert.match(
        readFileSync(join(work, directory, "CHANGELOG.md"), "utf8"),
        new RegExp(`\\n## ${next.replaceAll(".", "\\.")}\\n`)
      )
    }
    assert.include(
      readFileSync(join(work, "packages/signing/CHANGELOG.md"), "utf8"),
      "- Verifying a signature names the header that is missing."
    )
    // The examples are private: never versioned.
    assert.strictEqual(manifest("examples/embed", work).version, manifest("examples/embed").version)
  }, 60_000)
})
