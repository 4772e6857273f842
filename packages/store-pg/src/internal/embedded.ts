import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import * as Effect from "effect/Effect"

/**
 * The pool uses ONE connection. PGlite is a single session, so more connections add no
 * parallelism, and with several, pglite-socket's multiplexing lost a query's rows while another
 * connection ran a transaction (reproduced by `serves concurrent queries and transactions`).
 */
export const POOL_CONNECTIONS = 1
/** The socket server accepts one spare connection, so a pool replacing a broken one never waits. */
export const SOCKET_CONNECTIONS = POOL_CONNECTIONS + 1
/** The `port` part of the Unix socket name (`.s.PGSQL.<port>`), as PostgreSQL clients expect. */
export const SOCKET_PORT = 5432

export class EmbeddedStartError extends Error {
  override readonly name = "EmbeddedStartError"
}

/**
 * Starts PGlite on a data directory (or in memory, optionally from a dumped data directory) and
 * serves it on a Unix socket in a fresh private directory, so `pg` (and with it `@effect/sql-pg`)
 * talks to it like to any PostgreSQL, and nothing is exposed on a TCP port. PGlite is a single
 * session, shared by every connection to the socket: `searchPath` is set on it once, here.
 */
export const acquire = (
  dataDir: string,
  options: { readonly searchPath: string; readonly snapshot?: string | undefined }
) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const inMemory = dataDir === "memory://"
        if (!inMemory) await mkdir(dataDir, { recursive: true })
        const db = !inMemory
          ? new PGlite(dataDir)
          : options.snapshot === undefined
            ? new PGlite()
            : new PGlite({ loadDataDir: new Blob([await readFile(options.snapshot)]) })
        await db.waitReady
        try {
          // A name checked by `Migrations.schemaProblem`: a plain identifier.
          await db.exec(`SET search_path TO ${options.searchPath}`)
          const socketDir = await mkdtemp(join(tmpdir(), "waybill-pglite-"))
          const server = new PGLiteSocketServer({
            db,
            path: join(socketDir, `.s.PGSQL.${SOCKET_PORT}`),
            maxConnections: SOCKET_CONNECTIONS
          })
          await server.start()
          return { db, server, socketDir }
        } catch (cause) {
          await db.close().catch(() => {})
          throw cause
        }
      },
      catch: (cause) =>
        new EmbeddedStartError(
          `Could not open the embedded database at ${dataDir}: ${cause instanceof Error ? cause.message : String(cause)}`
        )
    }),
    ({ db, server, socketDir }) =>
      Effect.promise(async () => {
        await server.stop()
        await db.close()
        await rm(socketDir, { recursive: true, force: true })
      })
  )
