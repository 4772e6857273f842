/**
 * The keys command (`waybill-keys` as built; `npm run keys` runs its source) as a process against
 * a temporary data directory (and a fresh PostgreSQL database when DATABASE_URL is set), with the
 * reference server started in between to show that a created key authenticates and a revoked one
 * does not.
 */
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, describe, it, vi } from "@effect/vitest"
import * as Testing from "@waybill/store-pg/Testing"
import { ConfigProvider, Effect, Exit, Layer, Logger, Scope } from "effect"
import { config } from "../src/Config.js"
import * as DataDirLock from "../src/DataDirLock.js"
import * as ReferenceDataFile from "../src/ReferenceDataFile.js"
import * as Server from "../src/Server.js"

// The command as built (`waybill-keys`): the test run builds before any test
// (vitest.global-setup.ts), and a command from the build starts in half the CPU of one under tsx.
const keysScript = fileURLToPath(new URL("../dist/keys.js", import.meta.url))
const slow = 180_000

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** The environment a user would set: DATABASE_URL, or else WAYBILL_DATA_DIR. */
type Env = Record<string, string>

const baseEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  delete env.DATABASE_URL
  delete env.WAYBILL_DATA_DIR
  delete env.WAYBILL_API_KEYS
  // Vitest's, with the `@waybill/source` condition: it would load the sources under the build.
  delete env.NODE_OPTIONS
  return env
}

const keys = (env: Env, ...args: Array<string>) =>
  new Promise<Run>((resolve) => {
    execFile(
      process.execPath,
      [keysScript, ...args],
      { env: { ...baseEnv(), ...env }, encoding: "utf8" },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
    )
  })

/** The reference server in this process, configured from the same variables; `log` takes its records. */
const startServer = async (env: Env, log: Layer.Layer<never> = Logger.remove(Logger.defaultLogger)) => {
  const fromEnv = await Effect.runPromise(
    config.pipe(
      Effect.withConfigProvider(
        ConfigProvider.fromMap(new Map([["WAYBILL_SECRET_KEY", "0".repeat(64)], ...Object.entries(env)]))
      )
    )
  )
  const settings = { ...fromEnv, port: 0 }
  const referenceData = await Effect.runPromise(ReferenceDataFile.load(settings.referenceDataPath))
  const scope = Effect.runSync(Scope.make())
  // By default without a log: its request log would only add lines to a passing run.
  const server = Server.layer(settings, referenceData).pipe(Layer.provide(log))
  // With every key revoked the server issues a development key and prints it for a person at a
  // terminal: here it would only lengthen a passing run.
  const print = vi.spyOn(console, "log").mockImplementation(() => undefined)
  const context = await Effect.runPromise(Layer.buildWithScope(server, scope)).finally(() => print.mockRestore())
  const printed = print.mock.calls.length
  const base = Effect.runSync(Effect.provide(Server.baseUrl, context))
  return {
    printed,
    status: async (key: string) =>
      (await fetch(`${base}/transport-shapes`, { headers: { authorization: `Bearer ${key}` } })).status,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** The status of a request with each key, on one server start. */
const authenticates = async (env: Env, ...keys: ReadonlyArray<string>) => {
  const server = await startServer(env)
  try {
    const statuses: Array<number> = []
    for (const key of keys) statuses.push(await server.status(key))
    return statuses
  } finally {
    await server.close()
  }
}

const created = (run: Run) => {
  const id = /Created (key_[0-9a-z]+) for workspace/.exec(run.stdout)?.[1]
  const key = /^(wbk_\S+)$/m.exec(run.stdout)?.[1]
  assert.isDefined(id, run.stdout + run.stderr)
  assert.isDefined(key, run.stdout + run.stderr)
  return { id: id!, key: key! }
}

const dirs: Array<string> = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "waybill-keys-"))
  dirs.push(dir)
  return dir
}
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))))

const backends: Array<{ readonly name: string; readonly env: () => Promise<Env> }> = [
  // A copy of the run's migrated database: the commands under test open it, not initdb.
  {
    name: "embedded data directory",
    env: async () => {
      const dir = await Testing.makeDataDir("waybill-keys-")
      dirs.push(dir)
      return { WAYBILL_DATA_DIR: dir }
    }
  }
]
const postgresUrl = process.env.DATABASE_URL
if (postgresUrl !== undefined && postgresUrl !== "") {
  const scope = Effect.runSync(Scope.make())
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  backends.push({
    name: "PostgreSQL",
    env: async () => ({
      DATABASE_URL: await Effect.runPromise(Scope.extend(Testing.freshPostgresDatabase(postgresUrl), scope))
    })
  })
} else {
  describe("npm run keys [PostgreSQL]", () => {
    it.skip("NOT RUN: DATABASE_URL is not set, so the keys tool was tested on the embedded database only", () => {})
  })
}

for (const backend of backends) {
  describe(`npm run keys [${backend.name}]`, () => {
    it(
      "create prints a key once that authenticates; list shows it; revoke makes it fail",
      async () => {
        const env = await backend.env()
        const made = await keys(env, "create", "--workspace", "acme")
        assert.strictEqual(made.code, 0, made.stderr)
        const { id, key } = created(made)
        // Only the hash is stored: the key is nowhere in the listing.
        const listed = await keys(env, "list")
        assert.strictEqual(listed.code, 0, listed.stderr)
        assert.notInclude(listed.stdout, key)
        const row = listed.stdout.split("\n").find((line) => line.startsWith(id))
        assert.isDefined(row, listed.stdout)
        assert.match(row!, new RegExp(`^${id}\\s+acme\\s+\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\s+-$`))

        assert.deepStrictEqual(await authenticates(env, key, `${key.slice(0, -1)}x`), [200, 401])

        const revoked = await keys(env, "revoke", id)
        assert.strictEqual(revoked.code, 0, revoked.stderr)
        assert.include(revoked.stdout, `Revoked ${id}`)
        const again = await keys(env, "revoke", id)
        assert.strictEqual(again.code, 1)
        assert.include(again.stderr, `No active key ${id}`)
        const after = await keys(env, "list")
        assert.match(after.stdout, new RegExp(`^${id}\\s+acme\\s+\\S+Z\\s+\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z$`, "m"))

        assert.deepStrictEqual(await authenticates(env, key), [401])
      },
      slow
    )
  })
}

describe("npm run keys: usage and the data-directory lock", () => {
  it(
    "wrong usage exits 2 with the usage; help exits 0",
    async () => {
      const env = { WAYBILL_DATA_DIR: tempDir() }
      const usages = [["bogus"], ["create"], ["create", "--workspace", "no spaces"], ["revoke"], ["list", "x"]]
      // None of them opens the data directory: they may run at once.
      const [help, ...runs] = await Promise.all([keys(env, "help"), ...usages.map((args) => keys(env, ...args))])
      for (const [index, run] of runs.entries()) {
        assert.strictEqual(run!.code, 2, `${usages[index]!.join(" ")}: ${run!.stdout}${run!.stderr}`)
        // The command as built is the installed one: its usage names the bin a host has.
        assert.include(run!.stderr, "Usage: npx waybill-keys <command>")
      }
      assert.strictEqual(help.code, 0)
      assert.include(help.stdout, "create --workspace <id>")
    },
    slow
  )

  it(
    "refuses an embedded data directory held by a live process, and takes over a stale lock",
    async () => {
      // The run's migrated database (opened without initdb): this test is about the lock.
      const dataDir = await Testing.makeDataDir("waybill-keys-")
      dirs.push(dataDir)
      const env = { WAYBILL_DATA_DIR: dataDir }
      const scope = Effect.runSync(Scope.make())
      await Effect.runPromise(Scope.extend(DataDirLock.acquire({ _tag: "Embedded", dataDir }), scope))
      const held = await keys(env, "list")
      await Effect.runPromise(Scope.close(scope, Exit.void))
      assert.strictEqual(held.code, 1)
      assert.include(held.stderr, `is in use by process ${process.pid}`)

      // The pid of a process that has exited.
      const gone = await new Promise<number>((resolve) => {
        const child = spawn(process.execPath, ["-e", ""])
        child.on("exit", () => resolve(child.pid!))
      })
      writeFileSync(join(dataDir, DataDirLock.fileName), `${gone}\n`)
      const stale = await keys(env, "list")
      assert.strictEqual(stale.code, 0, stale.stderr)
      assert.include(stale.stdout, "No keys stored")
    },
    slow
  )
})

describe("the development key and the JSON log", () => {
  it(
    "with WAYBILL_LOG_FORMAT=json no key is issued or printed: a warning says how to create one",
    async () => {
      const env = { WAYBILL_DATA_DIR: await Testing.makeDataDir("waybill-keys-json-"), WAYBILL_LOG_FORMAT: "json" }
      const warnings: Array<unknown> = []
      const log = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning") warnings.push(message)
        })
      )
      const server = await startServer(env, log)
      try {
        assert.strictEqual(server.printed, 0)
        assert.match(String(warnings.flat()), /no development key is printed: set WAYBILL_API_KEYS or create a key/)
      } finally {
        await server.close()
      }
      const listed = await keys(env, "list")
      await rm(env.WAYBILL_DATA_DIR, { recursive: true, force: true })
      assert.include(listed.stdout, "No keys stored", listed.stdout + listed.stderr)
    },
    slow
  )
})
