/**
 * Waybill as a host installs it, before the packages are on the registry: in an empty project
 * made by `npm init -y` (a CommonJS one) outside the workspace, the install command of
 * docs/embedding.md, as written (`npm run install-packages -- <project> @waybill/server`: the
 * tarballs of the named package and its Waybill dependencies, pinned by `overrides`), then the
 * examples' own dependencies as the guide installs them. There the pure packages are required
 * from CommonJS, the CommonJS host of the guide runs with `require` and an async main, a
 * TypeScript consumer (ES modules as `.mts`) is type-checked under `moduleResolution: nodenext`
 * and run with plain Node, and Express and Hono applications mount the web handler, answer and
 * deliver a signed event that the receiver kit verifies; the keys command names itself as the
 * host runs it, and Effect is in the host's own dependencies. A second empty project installs
 * `@waybill/signing` alone, gets it with `@waybill/core`, nothing else, and every import of the
 * receiver guide resolves there. And every package
 * passes `npm publish --dry-run` without a warning of its own.
 */
import { execFile } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { packageDirectories } from "../scripts/pack.js"
import { assertJsonLogs, runLogFormat } from "./json-logs.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const work = mkdtempSync(join(tmpdir(), "waybill-consumer-"))
const project = join(work, "my-service")
const signingOnly = join(work, "my-receiver")

// Nothing of the workspace's environment: no source condition, no npm script context.
const environment = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", CI: "true", ...runLogFormat }
const npmOptions = ["--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"]

const run = (
  command: string,
  args: ReadonlyArray<string>,
  options: { cwd?: string; env?: Record<string, string>; timeout?: number } = {}
) =>
  new Promise<{ code: number; stdout: string; output: string }>((resolve) =>
    execFile(
      command,
      args,
      {
        cwd: options.cwd ?? project,
        env: { ...environment, ...options.env },
        timeout: options.timeout ?? 240_000,
        maxBuffer: 64 * 1024 * 1024
      },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : 1,
          stdout,
          output: stdout + stderr
        })
    )
  )

/** The lines of a `<!-- run: scenario -->` block of docs/embedding.md. */
const documented = (scenario: string): ReadonlyArray<string> => {
  const block = new RegExp(`<!-- run: ${scenario} -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\``).exec(
    readFileSync(join(root, "docs/embedding.md"), "utf8")
  )?.[1]
  return (block ?? "").split("\n").filter((line) => line.trim() !== "")
}

// The guide's install command names a project folder of its own: here, the test's projects.
const installCommand = documented("embed-install")
const installInto = (folder: string, names: ReadonlyArray<string>) => {
  const [line] = installCommand
  const words = (line ?? "").split(" ")
  assert.deepStrictEqual(words.slice(0, 4), ["npm", "run", "install-packages", "--"], line)
  return run("npm", ["run", "install-packages", "--", folder, ...names, ...npmOptions], { cwd: root, timeout: 600_000 })
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer()
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })

let install = { code: -1, stdout: "", output: "" }
let published = { code: -1, stdout: "", output: "" }

beforeAll(async () => {
  for (const folder of [project, signingOnly]) {
    mkdirSync(folder, { recursive: true })
    const init = await run("npm", ["init", "-y"], { cwd: folder })
    assert.strictEqual(init.code, 0, init.output)
  }
  const named = installCommand[0]?.split(" ").slice(5) ?? []
  install = await installInto(project, named)
  if (install.code !== 0) return
  // Every package was just built and packed: what the registry would be sent.
  published = await run("npm", ["publish", "--dry-run", "--workspaces", "--json"], { cwd: root })
  // The examples' own dependencies, as the guide installs them.
  for (const line of documented("embed-host-install")) {
    const [command, ...args] = line.split(" ")
    const result = await run(command!, [...args, ...npmOptions])
    if (result.code !== 0) {
      install = { ...result, output: `${line}\n${result.output}` }
      return
    }
  }
  // The consumer: the guide's CommonJS host, its domain examples and a host with Express and Hono
  // as ES modules in TypeScript (`.mts`, as a CommonJS project holds them).
  mkdirSync(join(project, "src/domain"), { recursive: true })
  for (const file of readdirSync(join(root, "examples/embed/src/domain"))) {
    cpSync(join(root, "examples/embed/src/domain", file), join(project, "src/domain", file.replace(/\.ts$/, ".mts")))
  }
  cpSync(join(root, "test/package/host.ts"), join(project, "src/host.mts"))
  cpSync(join(root, "examples/embed/src/commonjs.cjs"), join(project, "commonjs.cjs"))
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
}, 900_000)

// Two installed projects (tens of thousands of files): removed without blocking the worker.
afterAll(() => rm(work, { recursive: true, force: true }))

describe("the packages in a project outside the workspace, installed as docs/embedding.md says", () => {
  it("one command installs the named package from its tarball with its Waybill dependencies; Effect is a peer, one copy", async () => {
    assert.strictEqual(install.code, 0, install.output)
    assert.deepStrictEqual(installCommand, ["npm run install-packages -- ../my-service @waybill/server"])
    const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
      type: string
      dependencies: Record<string, string>
      overrides: Record<string, string>
    }
    assert.strictEqual(manifest.type, "commonjs")
    assert.strictEqual(manifest.dependencies["@waybill/server"], "file:waybill-packages/waybill-server-0.1.0.tgz")
    // The host's code imports Effect (the guide's host does): a peer, named in its own dependencies.
    const serverPeers = JSON.parse(readFileSync(join(root, "packages/server/package.json"), "utf8")) as {
      peerDependencies: Record<string, string>
    }
    assert.containsAllKeys(manifest.dependencies, Object.keys(serverPeers.peerDependencies))
    assert.sameMembers(
      Object.keys(manifest.overrides),
      readdirSync(join(project, "node_modules/@waybill")).map((name) => `@waybill/${name}`)
    )
    const listing = await run("npm", ["ls", "effect", "--all", "--parseable"])
    const copies = new Set(listing.output.split("\n").filter((line) => line.endsWith("/node_modules/effect")))
    assert.strictEqual(copies.size, 1, listing.output)
    // The packages hold their build, not the workspace's links.
    const http = JSON.parse(readFileSync(join(project, "node_modules/@waybill/http/package.json"), "utf8")) as {
      exports: Record<string, unknown>
      peerDependencies: Record<string, string>
    }
    assert.deepInclude(http.exports["./Client"] as object, {
      types: "./dist/Client.d.ts",
      default: "./dist/Client.js"
    })
    assert.notProperty(http.exports, "./*")
    assert.containsAllKeys(http.peerDependencies, ["effect", "@effect/platform"])
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

  it("@waybill/signing alone comes with @waybill/core and nothing else of Waybill's", async () => {
    assert.strictEqual(install.code, 0, install.output)
    const alone = await installInto(signingOnly, ["@waybill/signing"])
    assert.strictEqual(alone.code, 0, alone.output)
    assert.sameMembers(readdirSync(join(signingOnly, "node_modules/@waybill")), ["core", "signing"])
    assert.sameMembers(readdirSync(join(signingOnly, "waybill-packages")), [
      "waybill-core-0.1.0.tgz",
      "waybill-signing-0.1.0.tgz"
    ])
    writeFileSync(
      join(signingOnly, "verify.cjs"),
      [
        'const Hmac = require("@waybill/signing/Hmac")',
        'const headers = Hmac.signatureHeaders("a shared secret of 16+ characters", 1798000000, "{}")',
        'const verdict = Hmac.verify({ secret: "a shared secret of 16+ characters", headers, rawBody: "{}", now: 1798000000 })',
        'console.log(verdict._tag === "Right" ? "verified" : "refused")'
      ].join("\n")
    )
    const ran = await run(process.execPath, ["verify.cjs"], { cwd: signingOnly })
    assert.strictEqual(ran.code, 0, ran.output)
    assert.include(ran.output, "verified")
    // Every name docs/receiving-webhooks.md's receivers import from Waybill and Effect resolves in
    // a project that has installed @waybill/signing alone, as the guide says.
    const guide = readFileSync(join(root, "docs/receiving-webhooks.md"), "utf8")
    const imports = [...guide.matchAll(/^import \{ ([^}]+) \} from "([^"]+)"$/gm)].filter(
      ([, , from]) => from!.startsWith("@waybill/") || from === "effect"
    )
    assert.isAbove(imports.length, 0)
    for (const [line, names, from] of imports) {
      const wanted = names!.split(",").map((name) => name.trim().replace(/^type /, ""))
      const check = await run(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `const m = await import(${JSON.stringify(from)}); const missing = ${JSON.stringify(wanted)}.filter((n) => !(n in m)); console.log(missing.length === 0 ? "resolved" : "missing " + missing)`
        ],
        { cwd: signingOnly }
      )
      assert.include(check.output, "resolved", `${line}: ${check.output}`)
    }
  }, 300_000)

  it("every package passes npm publish --dry-run with its README, LICENSE, changelog and build", () => {
    assert.strictEqual(install.code, 0, install.output)
    assert.strictEqual(published.code, 0, published.output)
    // Warnings of the registry's login only (a dry run needs none): nothing npm had to correct.
    const warnings = published.output
      .split("\n")
      .filter(
        (line) => line.startsWith("npm warn") && !/requires you to be logged in|Skipping workspace .*private/.test(line)
      )
    assert.deepStrictEqual(warnings, [])
    const report = JSON.parse(published.stdout) as Record<
      string,
      { version: string; files: ReadonlyArray<{ path: string }> }
    >
    const names = packageDirectories().map(
      (directory) => (JSON.parse(readFileSync(join(root, directory, "package.json"), "utf8")) as { name: string }).name
    )
    assert.sameMembers(Object.keys(report), names)
    for (const [name, { files }] of Object.entries(report)) {
      const paths = files.map((file) => file.path)
      assert.includeMembers(
        paths,
        ["README.md", "LICENSE", "CHANGELOG.md", "package.json", "dist/index.js", "dist/index.d.ts"],
        name
      )
      assert.isFalse(
        paths.some((path) => path.startsWith("test/") || path.endsWith(".tsbuildinfo")),
        name
      )
    }
  })

  it("the keys command, as a host runs it, names itself in its hints", async () => {
    assert.strictEqual(install.code, 0, install.output)
    const dataDir = join(work, "keys-data")
    const listed = await run("npx", ["waybill-keys", "list"], { env: { WAYBILL_DATA_DIR: dataDir } })
    assert.strictEqual(listed.code, 0, listed.output)
    assert.include(listed.output, "No keys stored. Create one with: npx waybill-keys create --workspace <id>")
    const wrong = await run("npx", ["waybill-keys", "bogus"], { env: { WAYBILL_DATA_DIR: dataDir } })
    assert.strictEqual(wrong.code, 2, wrong.output)
    assert.include(wrong.output, "Usage: npx waybill-keys <command>")
    assert.notInclude(listed.output + wrong.output, "npm run keys")
  }, 120_000)

  it("requires the packages from CommonJS", async () => {
    assert.strictEqual(install.code, 0, install.output)
    const ran = await run(process.execPath, ["require.cjs"])
    assert.strictEqual(ran.code, 0, ran.output)
    assert.include(ran.output, '{"verified":true,"compile":"function"}')
  }, 60_000)

  it("runs the guide's CommonJS host (require, an async main) with plain Node, and stops it on SIGTERM", async () => {
    assert.strictEqual(install.code, 0, install.output)
    const port = await freePort()
    const host = execFile(process.execPath, ["commonjs.cjs"], {
      cwd: project,
      env: { ...environment, PORT: String(port), WAYBILL_API_KEYS: "acme:consumer-test-key-0001" }
    })
    let output = ""
    host.stdout?.on("data", (chunk) => (output += chunk))
    host.stderr?.on("data", (chunk) => (output += chunk))
    const exited = new Promise<number | null>((resolve) => host.on("exit", (code) => resolve(code)))
    try {
      const deadline = Date.now() + 90_000
      while (!/Listening on/.test(output) && Date.now() < deadline && host.exitCode === null) {
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.match(output, /Listening on http:\/\/127\.0\.0\.1:\d+; Waybill at/)
      const base = `http://127.0.0.1:${port}`
      assert.deepStrictEqual(await (await fetch(`${base}/`)).json(), { app: "my backend" })
      const shapes = await fetch(`${base}/waybill/transport-shapes`, {
        headers: { authorization: "Bearer consumer-test-key-0001" }
      })
      assert.strictEqual(shapes.status, 200)
    } finally {
      host.kill("SIGTERM")
    }
    assert.strictEqual(await exited, 0, output)
    // The guide's host says where it listens; the rest are Waybill's records.
    assertJsonLogs(
      output.split("\n").filter((line) => !line.startsWith("Listening on")),
      "the CommonJS host"
    )
  }, 120_000)

  it("type-checks a TypeScript consumer under moduleResolution nodenext and runs it with plain Node", async () => {
    assert.strictEqual(install.code, 0, install.output)
    const compiled = await run(join(project, "node_modules/.bin/tsc"), ["-p", "."])
    assert.strictEqual(compiled.code, 0, compiled.output)
    for (const example of ["signing", "filters", "recurring", "drafts"]) {
      assert.isTrue(existsSync(join(project, `dist/domain/${example}.mjs`)), example)
      const ran = await run(process.execPath, [`dist/domain/${example}.mjs`])
      assert.strictEqual(ran.code, 0, `${example}: ${ran.output}`)
      assert.notMatch(ran.output, /Error/, `${example}: ${ran.output}`)
    }
  }, 240_000)

  it("mounts the web handler in Express and Hono, answers, and delivers a signed event the receiver kit verifies", async () => {
    assert.strictEqual(install.code, 0, install.output)
    const ran = await run(process.execPath, ["dist/host.mjs"], { timeout: 120_000 })
    assert.strictEqual(ran.code, 0, ran.output)
    const result = (line: string) => line.startsWith('{"framework"')
    const output = ran.output.split("\n")
    assertJsonLogs(
      output.filter((line) => !result(line)),
      "the Express and Hono hosts"
    )
    const lines = output.filter(result).map((line) => JSON.parse(line) as Record<string, unknown>)
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
