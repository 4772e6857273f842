import * as SqlClient from "@effect/sql/SqlClient"
import type * as PgClient from "@effect/sql-pg/PgClient"
import { describe, it, layer } from "@effect/vitest"
import type { Transactor } from "@waybill/core/Transactor"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Testing from "../src/Testing.js"

type Database = PgClient.PgClient | SqlClient.SqlClient | Transactor

/**
 * Runs a storage suite once per back end: always on PGlite, and on PostgreSQL when
 * `DATABASE_URL` is set; says so loudly when it is not.
 */
export const forEachBackend = <R>(
  name: string,
  adapters: (database: Layer.Layer<Database, unknown>) => Layer.Layer<R | Database, unknown>,
  suite: Parameters<ReturnType<typeof layer<R | Database, unknown>>>[1]
) => {
  for (const backend of Testing.backends()) {
    layer(adapters(Testing.layer(backend)), { timeout: "120 seconds" })(`${name} [${backend.name}]`, suite)
  }
  if (!process.env.DATABASE_URL) {
    describe(`${name} [postgres]`, () => {
      it.skip("NOT RUN: DATABASE_URL is not set, so this suite ran on PGlite only", () => {})
    })
  }
}

/**
 * Waits (in real time) until every recorded event is readable from the outbox. The outbox is read
 * below the oldest transaction still open in the whole PostgreSQL cluster (`PgOutboxReader`), so
 * a transaction of another suite, in another database (its migrations, say), holds fresh events
 * back for a moment; a test that fans out right after publishing waits for it here.
 */
export const outboxReadable = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (let i = 0; i < 400; i++) {
    const [row] = yield* sql<{ waiting: boolean }>`
      SELECT EXISTS (SELECT 1 FROM events WHERE xid >= pg_snapshot_xmin(pg_current_snapshot())) AS waiting`
    if (row?.waiting !== true) return
    yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 25)))
  }
  return yield* Effect.dieMessage("events stayed unreadable from the outbox for 10 s")
})
