/**
 * Two reference servers (two connection pools, two generator loops) on one PostgreSQL, racing
 * `activate-recurring` for the same master: one 200, one 409, and the winner's lead-time tours
 * exist the moment its 200 arrives, whichever way the transactions interleave.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ReferenceDataFile from "@waybill/server/ReferenceDataFile"
import * as Server from "@waybill/server/Server"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect, Layer, Redacted } from "effect"
import { keys, testConfig, testLog } from "./harness.js"

const url = process.env.DATABASE_URL

// Daily at 06:00 UTC, three days ahead, from now: three tours once active.
const dailyMaster = {
  origin: "manual",
  status: "draft",
  name: "Race {{ date }}",
  transportShapeId: "shape_line",
  transport: {
    multiStopData: {
      stops: [
        { address: { city: "Hamburg" }, timeWindow: { from: "06:00", to: "08:00" } },
        { address: { city: "Berlin" }, timeWindow: { from: "12:00", to: "14:00" } }
      ]
    },
    tour: { vehicleClass: "vc_12t" }
  },
  recurringSchedule: { cronExpressions: ["0 6 * * *"], timezone: "UTC", leadTimeDays: 3 }
}

const request = (base: string, path: string, body?: unknown) =>
  Effect.promise(() =>
    fetch(`${base}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${keys.a}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    }).then(async (response) => ({ status: response.status, body: await response.json() }))
  )

// The servers' log, shown after a test that failed.
const log = testLog("the servers")
log.showOnFailure()

// A server on the shared database, with a generator loop that runs every 50 ms so it races too.
const startServer = (databaseUrl: string) =>
  Effect.gen(function* () {
    const referenceData = yield* ReferenceDataFile.load(ReferenceDataFile.defaultPath)
    const config = testConfig(
      { _tag: "Postgres", url: Redacted.make(databaseUrl), maxConnections: 5 },
      { generatorIntervalMs: 50 }
    )
    const context = yield* Layer.build(Server.layer(config, referenceData).pipe(Layer.provide(log.layer)))
    return yield* Effect.provide(Server.baseUrl, context)
  })

describe.skipIf(url !== undefined && url !== "")("activation race [postgres]", () => {
  it.skip("NOT RUN: DATABASE_URL is not set (this test needs a PostgreSQL shared by two servers)", () => {})
})

describe.runIf(url !== undefined && url !== "")("activation race [postgres]", () => {
  it.live(
    "two servers race activate-recurring 50 times: one 200, one 409, and the tours are there at the 200",
    () =>
      Effect.gen(function* () {
        const databaseUrl = yield* Testing.freshPostgresDatabase(url!)
        const first = yield* startServer(databaseUrl)
        const second = yield* startServer(databaseUrl)
        for (let round = 0; round < 50; round++) {
          const created = yield* request(first, "/drafts", dailyMaster)
          assert.strictEqual(created.status, 201, JSON.stringify(created.body))
          const id: string = created.body.id
          const answers = yield* Effect.all(
            [first, second].map((base) =>
              Effect.map(request(base, `/drafts/${id}/actions`, { type: "activate-recurring" }), (answer) => ({
                base,
                ...answer
              }))
            ),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(
            answers.map((answer) => answer.status).sort(),
            [200, 409],
            JSON.stringify(answers.map((answer) => answer.body))
          )
          const winner = answers.find((answer) => answer.status === 200)!
          const tours = yield* request(winner.base, `/tours?draftId=${id}&limit=100`)
          assert.strictEqual(tours.body.data.length, 3, `round ${round}: ${JSON.stringify(tours.body)}`)
        }
      }).pipe(Effect.scoped),
    { timeout: 120_000 }
  )
})
