import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import * as Effect from "effect/Effect"

/**
 * The pool uses ONE connection: PGlite is a single session, and with several, pglite-socket lost a
 * query's rows while another ran a transaction (`serves concurrent queries and transactions`).
 */
export const POOL_CONNECTIONS = 1
/** The socket server accepts one spare connection, so a pool replacing a broken one never waits. */
export const SOCKET_CONNECTIONS = POOL_CONNECTIONS + 1
/** The `port` part of the Unix socket name (`.s.PGSQL.<port>`), as PostgreSQL clients expect. */
export const SOCKET_PORT = 5432

export class EmbeddedStartError extends Error {
  override readonly name = "EmbeddedStartError"
}

export const SOCKET_DIR_PREFIX = "waybill-pglite-"
/** The file in a socket directory that names its process: `<host> <pid>`. */
export const OWNER_FILE = "owner"

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as NodeJS.ErrnoException).code !== "ESRCH"
  }
}

/**
 * Removes the socket directories that killed processes of this host left behind. A directory is
 * left alone unless its owner file names this host and a pid that no longer runs. Best effort.
 */
export const removeStaleSocketDirs = async (folder: string = tmpdir()): Promise<void> => {
  const host = hostname()
  const names = await readdir(folder).catch(() => [] as Array<string>)
  for (const name of names) {
    if (!name.startsWith(SOCKET_DIR_PREFIX)) continue
    const directory = join(folder, name)
    const owner = await readFile(join(directory, OWNER_FILE), "utf8").catch(() => undefined)
    const [ownerHost, ownerPid] = owner?.trim().split(" ") ?? []
    const pid = Number(ownerPid)
    if (ownerHost !== host || !Number.isSafeInteger(pid) || pid <= 0 || isAlive(pid)) continue
    await rm(directory, { recursive: true, force: true }).catch(() => {})
  }
}

/**
 * Starts PGlite and serves it on a Unix socket in a fresh private directory, so `pg` talks to it
 * like to any PostgreSQL, with no TCP port. Its one session gets `searchPath` once, here.
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
          await removeStaleSocketDirs()
          const socketDir = await mkdtemp(join(tmpdir(), SOCKET_DIR_PREFIX))
          await writeFile(join(socketDir, OWNER_FILE), `${hostname()} ${process.pid}\n`)
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
