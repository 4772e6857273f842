import type * as SqlClient from "@effect/sql/SqlClient"
import type * as PgClient from "@effect/sql-pg/PgClient"
import { describe, it, layer } from "@effect/vitest"
import type { Transactor } from "@waybill/core/Transactor"
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
