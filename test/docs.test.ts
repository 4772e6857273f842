/**
 * Every code block of the user guides is exercised (see "How the samples in these guides are
 * tested" in docs/quickstart.md):
 *
 * - `<!-- sample: path -->` + a TypeScript block: the block is that file, verbatim (without its
 *   leading comment); the file is type-checked by `tsc -b` and run by examples/embed's tests.
 * - `<!-- run: scenario -->` + a shell block: run here, as written, in that scenario (servers
 *   started with `npm start`, temporary data directories, throw-away PostgreSQL databases). The
 *   only changes: `curl` gets `--fail-with-body -sS`, the documented ports point at free ones,
 *   placeholders (`wbk_...`, `key_...`) become the values printed before, and a database URL
 *   becomes a throw-away database. They run in a fresh clone: the repository's files (tracked,
 *   and new ones not ignored) copied to a temporary folder with the installed `node_modules`,
 *   so nothing built here (`dist/`, `.waybill/`) can make a documented command pass.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect, Exit, Scope } from "effect"

const root = fileURLToPath(new URL("..", import.meta.url))
// README.md joins once it carries markers.
const readmeMarked = /<!-- (sample|run): /.test(readFileSync(join(root, "README.md"), "utf8"))
const guides = [
  "docs/quickstart.md",
  "docs/embedding.md",
  "docs/operations.md",
  "docs/security.md",
  ...(readmeMarked ? ["README.md"] : [])
]
const scenarios = [
  "outside",
  "demo",
  "quickstart-server",
  "server-direct",
  "quickstart",
  "quickstart-client",
  "quickstart-local-server",
  "quickstart-receiver",
  "quickstart-deliveries",
  "keys",
  // Run by test/package.test.ts, in an empty project outside the repository.
  "embed-install",
  "embed-host-install",
  "embed-server",
  "embed-client",
  "commands",
  "postgres-processes",
  "backup-embedded",
  "backup-postgres"
] as const
type Scenario = (typeof scenarios)[number]

interface Block {
  readonly doc: string
  readonly line: number
  readonly lang: string
  readonly marker: { readonly kind: "sample" | "run"; readonly value: string } | undefined
  readonly content: string
}

const parse = (doc: string): ReadonlyArray<Block> => {
  const lines = readFileSync(join(root, doc), "utf8").split("\n")
  const blocks: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\w*)\s*$/.exec(lines[i]!)
    if (open === null) continue
    const indent = open[1]!
    let end = i + 1
    while (end < lines.length && lines[end]!.trimEnd() !== `${indent}\`\`\``) end++
    let before = i - 1
    while (before >= 0 && lines[before]!.trim() === "") before--
    const marker = before >= 0 ? /^\s*<!-- (sample|run): (\S+) -->$/.exec(lines[before]!) : null
    blocks.push({
      doc,
      line: i + 1,
      lang: open[2]!,
      marker: marker === null ? undefined : { kind: marker[1] as "sample" | "run", value: marker[2]! },
      content: lines
        .slice(i + 1, end)
        .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
        .join("\n")
    })
    i = end
  }
  return blocks
}

const blocks = guides.flatMap(parse)
const where = (block: Block) => `${block.doc}:${block.line}`
const runBlocks = (scenario: Scenario) =>
  blocks.filter((block) => block.marker?.kind === "run" && block.marker.value === scenario)

/** A sample file as the guides show it: without its leading doc comment. */
const sampleText = (path: string) =>
  readFileSync(join(root, path), "utf8")
    .replace(/^\s*\/\*\*[\s\S]*?\*\/\n/, "")
    .replace(/^\n+|\n+$/g, "")

const strictCurl = (text: string) => text.replace(/(^|[\s(])curl /gm, "$1curl --fail-with-body -sS ")

/**
 * The environment of a child: the caller's, without anything that would configure Waybill, and
 * without what npm gave this test run (`NODE_OPTIONS` with the repository's source condition,
 * `npm_*`): a reader's terminal has neither.
 */
const cleanEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  for (const name of Object.keys(env)) {
    if (
      name === "DATABASE_URL" ||
      name === "PORT" ||
      name === "HOST" ||
      name === "NODE_OPTIONS" ||
      name.startsWith("WAYBILL_") ||
      name.toLowerCase().startsWith("npm_")
    )
      delete env[name]
  }
  return { ...env, ...extra }
}

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const bash = (script: string, options: { cwd?: string; env?: Record<string, string> } = {}) =>
  new Promise<Run>((resolve) => {
    execFile(
      "bash",
      ["-c", `set -euo pipefail\n${script}`],
      { cwd: options.cwd ?? clone(), env: cleanEnv(options.env), encoding: "utf8", timeout: 240_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  })

/**
 * A fresh clone of the repository as it is now: its files (tracked, and new ones not ignored)
 * in a temporary folder, with the installed `node_modules` linked in (hard links: what `npm
 * install` would put there). Nothing built or generated here comes along.
 */
let cloned: string | undefined
const clone = () => {
  if (cloned === undefined) throw new Error("the clone is made before the file's tests")
  return cloned
}
// Made without blocking the worker (linking node_modules is tens of thousands of calls).
beforeAll(async () => {
  const folder = await mkdtemp(join(tmpdir(), "waybill-clone-"))
  temps.push(folder)
  const { stdout } = await promisify(execFile)(
    "git",
    ["ls-files", "--cached", "--others", "--exclude-standard", "-z"],
    {
      cwd: root,
      encoding: "utf8"
    }
  )
  for (const file of stdout.split("\0").filter((file) => file !== "" && existsSync(join(root, file)))) {
    await mkdir(dirname(join(folder, file)), { recursive: true })
    await copyFile(join(root, file), join(folder, file))
  }
  await promisify(execFile)("cp", ["-al", join(root, "node_modules"), join(folder, "node_modules")])
  cloned = folder
}, 120_000)
const ok = (run: Run, what: string) => assert.strictEqual(run.code, 0, `${what}\n${run.stdout}\n${run.stderr}`)

/** A long-running shell command (its own process group), its output, and a way to stop it. */
const background = (command: string, options: { cwd?: string; env?: Record<string, string> } = {}) => {
  const child: ChildProcess = spawn("bash", ["-c", command], {
    cwd: options.cwd ?? clone(),
    env: cleanEnv(options.env),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  // npm passes a signal on to the server and then ends by that signal itself.
  const exited = new Promise<number | NodeJS.Signals>((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? signal ?? 1))
  )
  let done = false
  void exited.then(() => (done = true))
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name)
    } catch {
      // Already gone.
    }
  }
  return {
    output: () => output,
    waitFor: async (pattern: RegExp, timeoutMs = 150_000): Promise<RegExpExecArray> => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const match = pattern.exec(output)
        if (match !== null) return match
        if (done) throw new Error(`${command} exited before printing ${pattern}:\n${output}`)
        if (Date.now() > deadline) throw new Error(`${command} did not print ${pattern} in time:\n${output}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    },
    stop: (name: NodeJS.Signals = "SIGINT") => {
      signal(name)
      return exited
    },
    exited
  }
}
type Background = ReturnType<typeof background>

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Waits until the server process holding the data directory has ended (npm ends on the signal
 * at once, the server a moment later). With `graceful`, the server must also have released the
 * lock file on its way out.
 */
const released = async (dataDir: string, server: Background, graceful: boolean, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  const lock = join(dataDir, "waybill.lock")
  for (;;) {
    // The lock file holds the holder's pid (and, on Linux, its start time).
    const holder = existsSync(lock) ? Number(readFileSync(lock, "utf8").trim().split(/\s+/)[0]) : undefined
    if (holder === undefined || !alive(holder)) {
      if (graceful) assert.isUndefined(holder, `the server ended without releasing ${lock}:\n${server.output()}`)
      return
    }
    if (Date.now() > deadline) throw new Error(`${lock} is still held by ${holder}:\n${server.output().slice(-3000)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Stopped by the signal it was sent (through npm), or exited 0 on it. */
const graceful = (result: number | NodeJS.Signals, sent: NodeJS.Signals, output: string) =>
  assert.include([0, sent], result, output)

const running: Array<Background> = []
const start = (command: string, options: { cwd?: string; env?: Record<string, string> } = {}) => {
  const child = background(command, options)
  running.push(child)
  return child
}
afterAll(async () => {
  await Promise.all(running.map((child) => child.stop("SIGKILL")))
})

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer()
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })

// Every request of these tests gives up after 10 s, so a server that accepts and never answers
// fails its step (with the processes' output) instead of the whole test's time.
const requestTimeoutMs = 10_000

const healthy = async (base: string, output: () => string = () => "", timeoutMs = 120_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const up = await fetch(`${base}/health`, { signal: AbortSignal.timeout(requestTimeoutMs) }).then(
      (response) => response.ok,
      () => false
    )
    if (up) return
    if (Date.now() > deadline) throw new Error(`${base} did not become healthy:\n${output().slice(-5000)}`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

const api = async (base: string, key: string, path: string, body?: unknown) => {
  const response = await fetch(`${base}${path}`, {
    signal: AbortSignal.timeout(requestTimeoutMs),
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>) }
}

const temps: Array<string> = []
const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), "waybill-docs-"))
  temps.push(dir)
  return dir
}
afterAll(() => Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true }))))

const DEV_KEY = /wbk_[0-9a-z]{26}_[A-Za-z0-9_-]{43}/

/** A documented server command (`npm start`, `node --import tsx ...`); resolves once healthy. */
const startServer = async (command: string, env: Record<string, string>) => {
  const port = await freePort()
  const server = start(command, { env: { ...env, PORT: String(port) } })
  const base = `http://127.0.0.1:${port}`
  await server.waitFor(/Listening on/)
  await healthy(base, server.output)
  return { server, base, port }
}

describe("docs: every block is marked, and samples are the files", () => {
  if (!readmeMarked) {
    it.skip("NOT CHECKED: README.md has no sample/run markers yet, so its blocks are not run", () => {})
  }

  it("every shell and TypeScript block carries a sample or run marker; JSON blocks parse", () => {
    assert.isAbove(blocks.length, 20)
    for (const block of blocks) {
      if (["ts", "typescript", "js", "sh", "bash", "shell"].includes(block.lang)) {
        assert.isDefined(block.marker, `${where(block)}: a ${block.lang} block without a marker`)
        if (block.marker!.kind === "sample") {
          assert.strictEqual(block.lang, block.marker!.value.endsWith(".cjs") ? "js" : "ts", where(block))
        }
        if (block.marker!.kind === "run") {
          assert.strictEqual(block.lang, "sh", where(block))
          assert.include(scenarios as ReadonlyArray<string>, block.marker!.value, `${where(block)}: unknown scenario`)
        }
      } else if (block.lang === "json") {
        assert.doesNotThrow(() => JSON.parse(block.content), undefined, where(block))
      }
    }
  })

  it("every scenario of this test has blocks to run", () => {
    for (const scenario of scenarios) assert.isAbove(runBlocks(scenario).length, 0, scenario)
  })

  it("each sample block is its file, verbatim", () => {
    const samples = blocks.filter((block) => block.marker?.kind === "sample")
    assert.isAtLeast(samples.length, 10)
    for (const block of samples) {
      const path = block.marker!.value
      assert.isTrue(existsSync(join(root, path)), `${where(block)}: ${path} does not exist`)
      assert.strictEqual(block.content, sampleText(path), `${where(block)} differs from ${path}: copy the file in`)
    }
  })

  it("outside blocks hold only npm install and npm test; demo blocks only npm run demo (test/demo.test.ts)", () => {
    const outside = ["npm install", "npm test", "DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm test"]
    for (const block of runBlocks("outside")) assert.include(outside, block.content, where(block))
    for (const block of runBlocks("demo")) assert.strictEqual(block.content, "npm run demo", where(block))
  })

  it("the configuration table of operations.md names exactly the variables the server reads", () => {
    const table = new Set(
      [...readFileSync(join(root, "docs/operations.md"), "utf8").matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]!)
    )
    const read = new Set(
      [...readFileSync(join(root, "packages/server/src/Config.ts"), "utf8").matchAll(/\(\s*"([A-Z][A-Z_]+)"/g)].map(
        (m) => m[1]!
      )
    )
    assert.deepStrictEqual([...table].sort(), [...read].sort())
  })
})

describe("docs: commands", () => {
  it("quickstart: npm start, the API with curl, the typed client, then npm run keys with the server stopped", async () => {
    const dataDir = join(temp(), "data")
    const [startBlock] = runBlocks("quickstart-server")
    assert.strictEqual(startBlock!.content, "npm start")
    const { base, port, server } = await startServer(startBlock!.content, { WAYBILL_DATA_DIR: dataDir })
    const key = (await server.waitFor(DEV_KEY))[0]
    // The key comes before the server says where it listens.
    assert.isBelow(server.output().indexOf(key), server.output().indexOf("Listening on"), server.output())
    // The start-up log names the API reference and the operator console.
    assert.include(server.output(), `API reference at ${base}/docs, operator console at ${base}/console`)

    const script = runBlocks("quickstart")
      .map((block) => block.content)
      .join("\n")
      .replaceAll("wbk_...", key)
      .replaceAll("127.0.0.1:3000", `127.0.0.1:${port}`)
    const run = await bash(strictCurl(script))
    ok(run, "the quickstart's curl commands")
    assert.include(run.stdout, '{"status":"ok"}')
    assert.include(run.stdout, '"id":"shape_line"')
    assert.match(run.stdout, /drf_[0-9a-z]{26}\n/)
    assert.include(run.stdout, '"status":"active-recurring"')
    assert.match(run.stdout, /"name":"Line (Monday|Tuesday|Wednesday|Thursday|Friday)"/)
    assert.include(run.stdout, '"secret":"********"')
    assert.notInclude(run.stdout, "a shared secret of 16+ characters")
    assert.include(run.stdout, '"path":"tour.properties.prop_region"')

    // One log line per request, at INFO: method, path, status, duration.
    assert.match(server.output(), /level=INFO fiber=#\d+ message="GET \/transport-shapes 200 \d+ms" /)
    assert.notMatch(server.output(), /Sent HTTP response/)

    const [client] = runBlocks("quickstart-client")
    const typed = await bash(client!.content, { env: { WAYBILL_URL: base, WAYBILL_API_KEY: key } })
    ok(typed, "the typed client")
    assert.match(typed.stdout, /^created drf_\w+; \d+ draft\(s\) on the first page$/m)

    // Ctrl-C: a graceful stop that releases the data directory.
    graceful(await server.stop("SIGINT"), "SIGINT", server.output())
    await released(dataDir, server, false)

    // Your own deliveries: the server again with loopback targets allowed, the example receiver,
    // a webhook to it and an event published; the receiver verifies and prints the delivery.
    const [localBlock] = runBlocks("quickstart-local-server")
    const local = await startServer(localBlock!.content, { WAYBILL_DATA_DIR: dataDir })
    const receiverPort = await freePort()
    const [receiverBlock] = runBlocks("quickstart-receiver")
    const receiver = start(receiverBlock!.content, { env: { PORT: String(receiverPort) } })
    await receiver.waitFor(/receiver listening on/)
    const deliveries = await bash(
      strictCurl(
        runBlocks("quickstart-deliveries")
          .map((block) => block.content)
          .join("\n")
          .replaceAll("127.0.0.1:3000", `127.0.0.1:${local.port}`)
          .replaceAll("127.0.0.1:3001", `127.0.0.1:${receiverPort}`)
      ),
      { env: { WAYBILL_API_KEY: key } }
    )
    ok(deliveries, "the quickstart's deliveries")
    assert.match(deliveries.stdout, /\{"id":"evt_\w+"\}/)
    const delivered = await receiver.waitFor(/event=tour-created delivery=(dlv_\w+) verified=hmac/, 30_000)
    assert.include(deliveries.stdout, '"eventType":"tour-created"')
    graceful(await receiver.stop("SIGINT"), "SIGINT", receiver.output())
    graceful(await local.server.stop("SIGINT"), "SIGINT", local.server.output())
    await released(dataDir, local.server, false)
    assert.include(deliveries.stdout, delivered[1]!)

    // npm run keys, line by line: `key_...` is the key created just before (quickstart) or the
    // development key the client used so far (security.md's rotation).
    const env = { WAYBILL_DATA_DIR: dataDir }
    const listed = await bash("npm run keys -- list", { env })
    ok(listed, "keys list")
    const devKeyId = /^(key_\w+)\s+default\s/m.exec(listed.stdout)?.[1]
    assert.isDefined(devKeyId, listed.stdout)
    const created: Array<string> = []
    const revoked: Array<string> = []
    for (const block of runBlocks("keys")) {
      for (const line of block.content.split("\n").filter((text) => text.trim() !== "")) {
        const old = block.doc === "docs/security.md" ? devKeyId! : created.at(-1)!
        const command = line.replace("key_...", old)
        const result = await bash(command, { env })
        ok(result, command)
        const id = /^Created (key_\w+) for workspace acme/m.exec(result.stdout)?.[1]
        if (id !== undefined) {
          assert.match(result.stdout, /^wbk_\S+$/m)
          created.push(id)
        }
        if (line.includes(" revoke ")) revoked.push(old)
      }
    }
    assert.strictEqual(created.length, 2)
    assert.deepStrictEqual(revoked, [created[0], devKeyId])
    const after = await bash("npm run keys -- list", { env })
    for (const id of revoked) assert.match(after.stdout, new RegExp(`^${id}\\s+\\S+\\s+\\S+Z\\s+\\S+Z$`, "m"))
    assert.match(after.stdout, new RegExp(`^${created[1]}\\s+acme\\s+\\S+Z\\s+-$`, "m"))
  }, 400_000)

  it("embedding: each example starts as documented (npx tsx, node with the condition) and answers the documented calls", async () => {
    const [calls] = runBlocks("embed-client")
    const commands = runBlocks("embed-server").flatMap((block) =>
      block.content.split("\n").filter((line) => line.trim() !== "")
    )
    assert.strictEqual(commands.length, 5)
    // Side by side, each on a port of its own, as the guide says they can run.
    const examples = await Promise.all(
      commands.map(async (command) => {
        const port = await freePort()
        return { command, port, process: start(command, { env: { PORT: String(port) } }) }
      })
    )
    for (const example of examples) {
      await example.process.waitFor(/Listening on http:\/\/127\.0\.0\.1:\d+; Waybill at/)
      const run = await bash(strictCurl(calls!.content.replaceAll("127.0.0.1:3001", `127.0.0.1:${example.port}`)))
      ok(run, example.command)
      assert.include(run.stdout, '{"app":"my backend"}')
      assert.include(run.stdout, '{"status":"ok"}')
      assert.include(run.stdout, '"id":"shape_line"')
    }
    for (const example of examples) {
      graceful(await example.process.stop("SIGTERM"), "SIGTERM", example.process.output())
    }
    // What the guide says of node without the condition: in a fresh clone there is no build.
    const bare = await bash("node --import tsx examples/embed/src/domain/signing.ts")
    assert.notStrictEqual(bare.code, 0)
    assert.match(bare.stderr, /ERR_MODULE_NOT_FOUND.*node_modules\/@waybill\/signing\/dist\/Hmac\.js/)
  }, 300_000)

  it("plain commands: the domain samples and openssl rand", async () => {
    const run = await bash(
      runBlocks("commands")
        .map((block) => block.content)
        .join("\n")
    )
    ok(run, "commands")
    assert.include(run.stdout, "draft -> active-recurring")
    assert.include(run.stdout, "Line Monday 2027-03-29 vc_3t5 2027-03-29T04:00:00.000Z")
    assert.match(run.stdout, /north: true,\s+south: false/)
    assert.include(run.stdout, "true true true")
    assert.match(run.stdout, /^[0-9a-f]{64}$/m)
  }, 120_000)

  it("operations: the server under node directly stops gracefully; crash, backup and restore of the data directory", async () => {
    const workDir = temp()
    const env = { WAYBILL_DATA_DIR: join(workDir, ".waybill", "data") }
    const [direct] = runBlocks("server-direct")
    assert.strictEqual(direct!.content, "node --conditions=@waybill/source --import tsx packages/server/src/main.ts")
    const first = await startServer(direct!.content, env)
    const key = (await first.server.waitFor(DEV_KEY))[0]
    const draft = await api(first.base, key, "/drafts", {
      origin: "manual",
      status: "draft",
      name: "kept across crash and restore",
      transportShapeId: "shape_line"
    })
    assert.strictEqual(draft.status, 201)
    const id = draft.body!.id as string
    // A crash leaves a stale lock; the next start takes it over and finds every committed change.
    await first.server.stop("SIGKILL")
    assert.isTrue(existsSync(join(env.WAYBILL_DATA_DIR, "waybill.lock")))
    const second = await startServer(direct!.content, env)
    assert.strictEqual((await api(second.base, key, `/drafts/${id}`)).status, 200)
    // What a process manager sends: the server closes its database and releases the directory.
    assert.strictEqual(await second.server.stop("SIGTERM"), 0, second.server.output())
    await released(env.WAYBILL_DATA_DIR, second.server, true)

    const [backup, restore] = runBlocks("backup-embedded")
    ok(await bash(backup!.content, { cwd: workDir }), "backup")
    assert.isTrue(existsSync(join(workDir, "waybill-backup.tgz")))
    ok(await bash(restore!.content, { cwd: workDir }), "restore")
    const third = await startServer("npm start", env)
    const restored = await api(third.base, key, `/drafts/${id}`)
    assert.strictEqual(restored.status, 200)
    assert.strictEqual(restored.body!.name, "kept across crash and restore")
    graceful(await third.server.stop("SIGINT"), "SIGINT", third.server.output())
    await released(env.WAYBILL_DATA_DIR, third.server, false)
  }, 400_000)
})

const postgresUrl = process.env.DATABASE_URL
describe.skipIf(postgresUrl === undefined || postgresUrl === "")("docs: PostgreSQL commands", () => {
  const scope = Effect.runSync(Scope.make())
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  const fresh = () => Effect.runPromise(Scope.extend(Testing.freshPostgresDatabase(postgresUrl!), scope))

  // The documented script on two ports found free. A port can be taken by another test's server
  // between finding it free and our server binding it: the server says so and exits, and the
  // script runs again on new ports. Otherwise each server said it listens on its own port, so
  // what answers there is ours.
  const startTwo = async (databaseUrl: string) => {
    const [block] = runBlocks("postgres-processes")
    for (let attempt = 1; ; attempt++) {
      const ports = [await freePort(), await freePort()] as const
      const processes = start(
        block!.content
          .replace("postgres://postgres@127.0.0.1:5432/waybill", databaseUrl)
          .replace("PORT=3000", `PORT=${ports[0]}`)
          .replace("PORT=3001", `PORT=${ports[1]}`)
      )
      const key = (await processes.waitFor(/^(wbk_\S+)$/m, 90_000))[1]!
      const bound = await Promise.all(
        ports.map((port) =>
          processes.waitFor(
            new RegExp(`Listening on http://\\S+:${port}\\b|PORT: \\S+:${port} is already in use`),
            90_000
          )
        )
      )
      if (bound.every((line) => line[0].startsWith("Listening"))) {
        return { processes, key, bases: ports.map((port) => `http://127.0.0.1:${port}`) }
      }
      await processes.stop("SIGKILL")
      if (attempt === 3) throw new Error(`the ports found free were taken three times:\n${processes.output()}`)
    }
  }

  it("several processes on one PostgreSQL, started as documented, share keys and data", async () => {
    const { processes, key, bases } = await startTwo(await fresh())
    const [a, b] = bases as [string, string]
    await healthy(a, processes.output, 60_000)
    await healthy(b, processes.output, 60_000)
    const draft = await api(a, key, "/drafts", { origin: "manual", status: "draft", transportShapeId: "shape_line" })
    assert.strictEqual(draft.status, 201, processes.output())
    const seen = await api(b, key, `/drafts/${draft.body!.id as string}`)
    assert.strictEqual(seen.status, 200, processes.output())
    // Both servers stop on the signal, and the script's `wait` with them.
    const stopped = await Promise.race([
      processes.stop("SIGTERM"),
      new Promise((resolve) => setTimeout(() => resolve("still running"), 30_000))
    ])
    assert.notStrictEqual(stopped, "still running", `the servers did not stop on SIGTERM:\n${processes.output()}`)
  }, 300_000)

  it("backup with pg_dump and restore with pg_restore into a new database", async () => {
    const workDir = temp()
    const databaseUrl = await fresh()
    const secretKey = "cd".repeat(32)
    const apiKey = "docs-backup-key-0001"
    const env = { DATABASE_URL: databaseUrl, WAYBILL_SECRET_KEY: secretKey, WAYBILL_API_KEYS: `acme:${apiKey}` }
    const first = await startServer("npm start", env)
    const draft = await api(first.base, apiKey, "/drafts", {
      origin: "manual",
      status: "draft",
      name: "in the dump",
      transportShapeId: "shape_line"
    })
    assert.strictEqual(draft.status, 201)
    const webhook = await api(first.base, apiKey, "/webhooks", {
      url: "https://hooks.example.org/waybill",
      events: ["tour-created"],
      auth: { type: "hmac", secret: "backup-test-secret-0001" }
    })
    assert.strictEqual(webhook.status, 201)

    const [dump, restore] = runBlocks("backup-postgres")
    // The dump is taken while the server runs.
    ok(await bash(dump!.content, { cwd: workDir, env: { DATABASE_URL: databaseUrl } }), "pg_dump")
    graceful(await first.server.stop("SIGINT"), "SIGINT", first.server.output())

    const server = new URL(postgresUrl!)
    const name = `waybill_restored_${Date.now().toString(36)}`
    const target = new URL(postgresUrl!)
    target.pathname = `/${name}`
    const script = restore!.content
      .replace(
        "createdb --host=127.0.0.1 --username=postgres waybill_restored",
        `createdb --host=${server.hostname} --port=${server.port || "5432"} --username=${server.username || "postgres"} ${name}`
      )
      .replace("postgres://postgres@127.0.0.1:5432/waybill_restored", target.toString())
    try {
      ok(await bash(script, { cwd: workDir, env: server.password ? { PGPASSWORD: server.password } : {} }), "restore")
      const restored = await startServer("npm start", { ...env, DATABASE_URL: target.toString() })
      const read = await api(restored.base, apiKey, `/drafts/${draft.body!.id as string}`)
      assert.strictEqual(read.body?.name, "in the dump")
      const hooks = await api(restored.base, apiKey, "/webhooks")
      assert.deepStrictEqual(
        (hooks.body!.data as Array<{ id: string; auth: unknown }>).map((hook) => [hook.id, hook.auth]),
        [[webhook.body!.id, { type: "hmac", secret: "********", scheme: "waybill" }]]
      )
      graceful(await restored.server.stop("SIGINT"), "SIGINT", restored.server.output())
    } finally {
      await bash(`dropdb --if-exists --force ${name}`, {
        env: {
          PGHOST: server.hostname,
          PGPORT: server.port || "5432",
          PGUSER: server.username || "postgres",
          ...(server.password ? { PGPASSWORD: server.password } : {})
        }
      })
    }
  }, 400_000)
})

if (postgresUrl === undefined || postgresUrl === "") {
  describe("docs: PostgreSQL commands [postgres]", () => {
    it.skip("NOT RUN: DATABASE_URL is not set, so the PostgreSQL commands of operations.md were not run", () => {})
  })
}
