/**
 * Waybill as a host installs it: every `@waybill/*` package is built and packed, and the
 * tarballs go into an empty project outside the workspace with plain `npm install` (no tsx, no
 * path mapping, no workspace links). There the pure packages are imported from plain Node (ESM
 * and `require`), a TypeScript consumer is type-checked under `moduleResolution: nodenext`, and
 * an Express and a Hono application mount the web handler, answer requests and deliver a signed
 * event that the receiver kit verifies.
 */
import { execFile } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { packAll } from "../scripts/pack.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const work = mkdtempSync(join(tmpdir(), "waybill-consumer-"))
const project = join(work, "host")

// Nothing of the workspace's environment: no source condition, no npm script context.
const environment = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", CI: "true" }

const run = (command: string, args: ReadonlyArray<string>, timeout = 240_000) =>
  new Promise<{ code: number; output: string }>((resolve) =>
    execFile(
      command,
      args,
      { cwd: project, env: environment, timeout, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, output: stdout + stderr })
    )
  )

// The host's own dependencies at the versions the workspace locked (so the npm cache has them).
const installed = (name: string) =>
  `${name}@${(JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")) as { version: string }).version}`
const hostDependencies = ["express", "hono", "@hono/node-server"]
const hostDevDependencies = ["typescript", "@types/node", "@types/express"]

// The install command of docs/embedding.md, as written.
const documentedInstall = /<!-- run: embed-install -->\n```sh\n(.+)\n```/.exec(
  readFileSync(join(root, "docs/embedding.md"), "utf8")
)?.[1]

describe("the packed packages in a project outside the workspace", () => {
  let install = { code: -1, output: "" }

  beforeAll(async () => {
    const tarballs = packAll(join(work, "tarballs"))
    const tarballOf = new Map(tarballs.map(({ name, tarball }) => [name, tarball]))
    // The registry, played by the tarballs: the documented command names packages, each of which
    // is installed from its tarball; the ones it brings along are pinned to theirs by overrides.
    const command = (documentedInstall ?? "").split(" ")
    const named = command.filter((word) => tarballOf.has(word))
    mkdirSync(join(project, "src/domain"), { recursive: true })
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify(
        {
          name: "host",
          private: true,
          type: "module",
          overrides: Object.fromEntries(
            tarballs.filter(({ name }) => !named.includes(name)).map(({ name, tarball }) => [name, `file:${tarball}`])
          )
        },
        null,
        2
      )
    )
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          skipLibCheck: true,
          types: ["node"],
          rootDir: "src",
          outDir: "dist"
        },
        include: ["src"]
      })
    )
    // The consumer: the domain examples of docs/embedding.md and a host with Express and Hono.
    for (const file of readdirSync(join(root, "examples/embed/src/domain"))) {
      cpSync(join(root, "examples/embed/src/domain", file), join(project, "src/domain", file))
    }
    cpSync(join(root, "test/package/host.ts"), join(project, "src/host.ts"))
    writeFileSync(
      join(project, "require.cjs"),
      [
        'const Hmac = require("@waybill/signing/Hmac")',
        'const { compileFilter } = require("@waybill/filters/Filter")',
        'const Either = require("effect/Either")',
        'const headers = Hmac.signatureHeaders("a shared secret of 16+ characters", 1798000000, "{}")',
        'const verdict = Hmac.verify({ secret: "a shared secret of 16+ characters", headers, rawBody: "{}", now: 1798000000 })',
        "console.log(JSON.stringify({ verified: Either.isRight(verdict), compile: typeof compileFilter }))"
      ].join("\n")
    )
    const options = ["--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"]
    if (command.slice(0, 2).join(" ") !== "npm install" || named.length === 0) {
      install = {
        code: 1,
        output: `docs/embedding.md: the embed-install block is not an npm install of @waybill packages: ${documentedInstall}`
      }
      return
    }
    install = await run("npm", [...command.slice(1).map((word) => tarballOf.get(word) ?? word), ...options])
    if (install.code !== 0) return
    install = await run("npm", ["install", ...hostDependencies.map(installed), ...options])
    if (install.code !== 0) return
    install = await run("npm", ["install", "--save-dev", ...hostDevDependencies.map(installed), ...options])
  }, 600_000)

  afterAll(() => rmSync(work, { recursive: true, force: true }))

  it("installs as docs/embedding.md says, with plain npm install: Effect as a peer, one copy of it", async () => {
    assert.strictEqual(install.code, 0, install.output)
    const listing = await run("npm", ["ls", "effect", "--all", "--parseable"])
    const copies = new Set(listing.output.split("\n").filter((line) => line.endsWith("/node_modules/effect")))
    assert.strictEqual(copies.size, 1, listing.output)
    // The packages hold their build, not the workspace's links.
    const manifest = JSON.parse(readFileSync(join(project, "node_modules/@waybill/http/package.json"), "utf8")) as {
      exports: Record<string, unknown>
      peerDependencies: Record<string, string>
    }
    assert.deepInclude(manifest.exports["./Client"] as object, {
      types: "./dist/Client.d.ts",
      default: "./dist/Client.js"
    })
    assert.notProperty(manifest.exports, "./*")
    assert.containsAllKeys(manifest.peerDependencies, ["effect", "@effect/platform"])
    // The exports list the public modules only: the server's commands are not modules.
    const importing = (specifier: string) =>
      run(process.execPath, [
        "--input-type=module",
        "-e",
        `import(${JSON.stringify(specifier)}).then(() => console.log("imported"), (error) => console.log(error.code))`
      ])
    assert.include((await importing("@waybill/server/Waybill")).output, "imported")
    for (const specifier of ["@waybill/server/main", "@waybill/server/keys", "@waybill/webhooks/internal/batch"]) {
      assert.include((await importing(specifier)).output, "ERR_PACKAGE_PATH_NOT_EXPORTED", specifier)
    }
  }, 120_000)

  it("type-checks a TypeScript consumer under moduleResolution nodenext and runs it with plain Node", async () => {
    assert.strictEqual(install.code, 0, install.output)
    const compiled = await run(join(project, "node_modules/.bin/tsc"), ["-p", "."])
    assert.strictEqual(compiled.code, 0, compiled.output)
    for (const example of ["signing", "filters", "recurring", "drafts"]) {
      const ran = await run(process.execPath, [`dist/domain/${example}.js`])
      assert.strictEqual(ran.code, 0, `${example}: ${ran.output}`)
      assert.notMatch(ran.output, /Error/, `${example}: ${ran.output}`)
    }
  }, 240_000)

  it("requires the packages from CommonJS", async () => {
    assert.strictEqual(install.code, 0, install.output)
    const ran = await run(process.execPath, ["require.cjs"])
    assert.strictEqual(ran.code, 0, ran.output)
    assert.include(ran.output, '{"verified":true,"compile":"function"}')
  }, 60_000)

  it("mounts the web handler in Express and Hono, answers, and delivers a signed event the receiver kit verifies", async () => {
    assert.strictEqual(install.code, 0, install.output)
    const ran = await run(process.execPath, ["dist/host.js"], 120_000)
    assert.strictEqual(ran.code, 0, ran.output)
    const lines = ran.output
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    const expected = {
      health: 200,
      servers: [{ url: "/waybill" }],
      webhook: 201,
      published: 202,
      delivered: "tour-created"
    }
    assert.deepStrictEqual(lines, [
      { framework: "express", ...expected },
      { framework: "hono", ...expected }
    ])
  }, 180_000)
})
