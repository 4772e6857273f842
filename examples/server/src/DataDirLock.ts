/**
 * One process at a time on an embedded data directory. PGlite keeps the database in the memory
 * of the process that opened it and writes it back to the directory: a second process (another
 * server, `npm run keys`) on the same directory would neither see the first one's changes nor be
 * seen, and could overwrite them. The server and the keys tool therefore hold
 * `<dataDir>/waybill.lock` (the holder's pid) while they use the directory. A lock whose process
 * is gone is stale and taken over. `memory://` and PostgreSQL need no lock.
 *
 * @since 0.1.0
 */
import { mkdir, readFile, unlink, writeFile } from "node:fs/promises"
import { join } from "node:path"
import type { DatabaseConfig } from "@waybill/store-pg/Database"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

/**
 * The directory is in use by another live process, or the lock cannot be written.
 *
 * @since 0.1.0
 * @category errors
 */
export class DataDirLockError extends Data.TaggedError("DataDirLockError")<{ readonly message: string }> {}

/**
 * The lock file's name inside the data directory.
 *
 * @since 0.1.0
 * @category constants
 */
export const fileName = "waybill.lock"

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const take = async (file: string): Promise<void> => {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: "wx", mode: 0o600 })
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    const holder = Number.parseInt((await readFile(file, "utf8").catch(() => "")).trim(), 10)
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
      throw new DataDirLockError({
        message: `The embedded database in ${join(file, "..")} is in use by process ${holder} (a running server?). Stop it first, or share a PostgreSQL database through DATABASE_URL.`
      })
    }
    // Stale (its process is gone): take it over.
    await unlink(file).catch(() => undefined)
  }
  throw new Error(`could not create ${file}`)
}

/**
 * Holds the lock of the configured embedded data directory for the life of the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const acquire = (database: DatabaseConfig) => {
  if (database._tag !== "Embedded" || database.dataDir === "memory://") return Effect.void
  const file = join(database.dataDir, fileName)
  return Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        await mkdir(database.dataDir, { recursive: true })
        await take(file)
      },
      catch: (error) =>
        error instanceof DataDirLockError
          ? error
          : new DataDirLockError({ message: `Cannot lock ${file}: ${(error as Error).message}` })
    }),
    () =>
      Effect.promise(async () => {
        const holder = await readFile(file, "utf8").catch(() => "")
        if (holder.trim() === String(process.pid)) await unlink(file).catch(() => undefined)
      })
  )
}
