/**
 * `Idempotency-Key` across processes (contract §8: "the guarantee holds across processes sharing
 * one database"): two reference server processes on one PostgreSQL receive 50 concurrent
 * requests with one key, for each of the three routes; exactly one creation is stored, every
 * 2xx answer is the same, and the others are 409 (the first still in flight in that process).
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import { assert, describe, it } from "@effect/vitest"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect, Redacted } from "effect"
import { report } from "./json-logs.js"
import { processKey as key, serverProcess } from "./server-process.js"

const url = process.env.DATABASE_URL

const post = (base: string, path: string, body: unknown, idempotencyKey: string) =>
  Effect.promise(() =>
    fetch(`${base}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${key}`,
        "idempotency-key": idempotencyKey
      },
      body: JSON.stringify(body)
    }).then(async (response) => ({
      status: response.status,
      replayed: response.headers.get("idempotent-replayed"),
      text: await response.text()
    }))
  )

const routes = [
  {
    path: "/events",
    body: {
      type: "tour-created",
      payload: { tour: { id: "tour_raced", status: "planned", substatus: null, properties: {} } }
    },
    status: 202,
    stored: `SELECT count(*)::int AS n FROM waybill.events WHERE body LIKE '%tour_raced%'`
  },
  {
    path: "/drafts",
    body: { origin: "manual", status: "draft", transportShapeId: "shape_line", name: "Raced draft" },
    status: 201,
    stored: `SELECT count(*)::int AS n FROM waybill.drafts WHERE document->>'name' = 'Raced draft'`
  },
  {
    path: "/webhooks",
    body: { url: "http://127.0.0.1:9/raced", events: ["tour-deleted"], auth: { type: "bearer", token: "raced" } },
    status: 201,
    stored: `SELECT count(*)::int AS n FROM waybill.webhooks WHERE document->>'url' = 'http://127.0.0.1:9/raced'`
  }
] as const

describe.skipIf(url === undefined || url === "")(
  "Idempotency-Key across two server processes on one PostgreSQL",
  () => {
    it.live(
      "50 concurrent requests with one key over two processes: one creation per route, one answer",
      () =>
        Effect.gen(function* () {
          const databaseUrl = yield* Testing.freshPostgresDatabase(url!)
          const [one, two] = yield* Effect.all([serverProcess(databaseUrl), serverProcess(databaseUrl)], {
            concurrency: 2
          })
          const sql = yield* PgClient.make({ url: Redacted.make(databaseUrl), maxConnections: 1 }).pipe(
            Effect.provide(Reactivity.layer)
          )
          for (const route of routes) {
            const idempotencyKey = `raced-key${route.path.replace("/", "-")}`
            const answers = yield* Effect.all(
              Array.from({ length: 50 }, (_, i) =>
                post(i % 2 === 0 ? one.base : two.base, route.path, route.body, idempotencyKey)
              ),
              { concurrency: "unbounded" }
            )
            const [stored] = yield* sql<{ n: number }>`${sql.literal(route.stored)}`
            assert.strictEqual(stored!.n, 1, `${route.path}: stored once`)
            const succeeded = answers.filter((answer) => answer.status === route.status)
            const conflicts = answers.filter((answer) => answer.status === 409)
            assert.strictEqual(succeeded.length + conflicts.length, 50, JSON.stringify(answers.map((a) => a.status)))
            assert.strictEqual(new Set(succeeded.map((answer) => answer.text)).size, 1, `${route.path}: one answer`)
            assert.strictEqual(succeeded.filter((answer) => answer.replayed === null).length, 1)
            assert.isTrue(conflicts.every((answer) => JSON.parse(answer.text).code === "conflict"))
            // Afterwards every process replays it.
            for (const base of [one.base, two.base]) {
              const later = yield* post(base, route.path, route.body, idempotencyKey)
              assert.deepStrictEqual(
                [later.status, later.replayed, later.text],
                [route.status, "true", succeeded[0]!.text]
              )
            }
            report(
              `${route.path}: ${succeeded.length} answered (1 creation, ${succeeded.length - 1} replays), ${conflicts.length} × 409 while in flight`
            )
          }
        }).pipe(Effect.scoped),
      240_000
    )
  }
)

if (url === undefined || url === "") {
  describe("Idempotency-Key across two server processes on one PostgreSQL", () => {
    it.skip("NOT RUN: DATABASE_URL is not set (two processes need a PostgreSQL)", () => {})
  })
}
