/**
 * `Waybill.make`'s keys rule: a host names its keys or has stored some; no development key is
 * ever issued (or printed into the host's log).
 */
import { rm } from "node:fs/promises"
import { join } from "node:path"
import { afterAll, assert, describe, it, vi } from "@effect/vitest"
import * as ApiKeys from "@waybill/core/ApiKeys"
import { WorkspaceId } from "@waybill/core/Workspace"
import * as Database from "@waybill/store-pg/Database"
import * as PgApiKeyStore from "@waybill/store-pg/PgApiKeyStore"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect, Layer, Redacted, Schema } from "effect"
import * as Waybill from "../src/Waybill.js"

const directories: Array<string> = []
afterAll(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true })
})

/** A data directory of its own holding the run's migrated database: opened without initdb. */
const migratedDataDir = async () => {
  const dataDir = await Testing.makeDataDir("waybill-embedded-keys-")
  directories.push(dataDir)
  return dataDir
}

const shapes = async (waybill: Waybill.Waybill, key: string) =>
  (await waybill.handler(new Request("http://host/transport-shapes", { headers: { authorization: `Bearer ${key}` } })))
    .status

// The run's log format (\`WAYBILL_LOG_FORMAT=json npm test\` checks every line on its console).
const logFormat = process.env.WAYBILL_LOG_FORMAT === "json" ? { WAYBILL_LOG_FORMAT: "json" } : {}

describe("Waybill.make and API keys", () => {
  it("refuses to start without WAYBILL_API_KEYS on a database that holds no key, naming the variable; prints no key", async () => {
    const printed = vi.spyOn(console, "log")
    try {
      const error = await Waybill.make({ env: { WAYBILL_DATA_DIR: await migratedDataDir() } }).then(
        () => undefined,
        (error: unknown) => error
      )
      assert.instanceOf(error, Error)
      assert.match(
        (error as Error).message,
        /^Configuration error \(nothing was started\): WAYBILL_API_KEYS: set workspaceId:key pairs .*, or store keys in the database with waybill-keys; Waybill.make issues no development key$/
      )
      assert.strictEqual(printed.mock.calls.length, 0)
    } finally {
      printed.mockRestore()
    }
  })

  it("serves the keys of WAYBILL_API_KEYS", async () => {
    const waybill = await Waybill.make({
      env: { WAYBILL_API_KEYS: "acme:embedded-key-0001", WAYBILL_DATA_DIR: await migratedDataDir(), ...logFormat }
    })
    try {
      assert.strictEqual(await shapes(waybill, "embedded-key-0001"), 200)
      assert.strictEqual(await shapes(waybill, "another-key-0002"), 401)
    } finally {
      await waybill.close()
    }
  })

  it("without WAYBILL_API_KEYS, serves the keys stored in its database (waybill-keys); refuses one whose keys are all revoked", async () => {
    const dataDir = await migratedDataDir()
    // What `waybill-keys create` does, on the database Waybill.make opens (`<dir>/pglite`).
    const keys = ApiKeys.layer([]).pipe(
      Layer.provide(PgApiKeyStore.layer),
      Layer.provide(Database.layer({ _tag: "Embedded", dataDir: join(dataDir, "pglite") }))
    )
    const issued = await Effect.runPromise(
      Effect.flatMap(ApiKeys.ApiKeys, (service) => service.create(Schema.decodeSync(WorkspaceId)("acme"))).pipe(
        Effect.provide(keys)
      )
    )
    const waybill = await Waybill.make({ env: { WAYBILL_DATA_DIR: dataDir, ...logFormat } })
    try {
      assert.strictEqual(await shapes(waybill, Redacted.value(issued.key)), 200)
    } finally {
      await waybill.close()
    }
    await Effect.runPromise(
      Effect.flatMap(ApiKeys.ApiKeys, (service) => service.revoke(issued.record.id)).pipe(Effect.provide(keys))
    )
    const refused = await Waybill.make({ env: { WAYBILL_DATA_DIR: dataDir } }).then(
      () => undefined,
      (error: unknown) => error
    )
    assert.match(String(refused), /WAYBILL_API_KEYS: set workspaceId:key pairs/)
  })
})
