/**
 * One process at a time on an embedded data directory, as PGlite keeps the database in the memory
 * of the process that opened it (docs/internals.md, DataDirLock).
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import { mkdir, readFile, realpath, stat, unlink, writeFile } from "node:fs/promises"
import * as net from "node:net"
import { join } from "node:path"
import type { DatabaseConfig } from "@waybill/store-pg/Database"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

/** The directory is in use by another live process, or the lock cannot be taken. @since 0.1.0 */
export class DataDirLockError extends Data.TaggedError("DataDirLockError")<{ readonly message: string }> {}

/** The lock file's name inside the data directory. @since 0.1.0 */
export const fileName = "waybill.lock"

const EXIT_WAIT_MS = 10_000

const PF_EXITING = 0x4

interface Holder {
  readonly pid: number
  /** Clock ticks since boot when it started (`/proc/<pid>/stat` field 22), if known. */
  readonly startTime: string | undefined
}

// Fields 3 onwards of /proc/<pid>/stat; the command name (field 2) may hold spaces and ')'.
const procStat = async (pid: number): Promise<ReadonlyArray<string> | undefined> => {
  try {
    const text = await readFile(`/proc/${pid}/stat`, "utf8")
    return text.slice(text.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}

const ownStartTime = async () => (await procStat(process.pid))?.[19]

const isLive = async (holder: Holder): Promise<boolean> => {
  const fields = await procStat(holder.pid)
  if (fields === undefined) return false
  const [state, , , , , , flags] = fields
  if (state === "Z" || state === "X" || state === "x") return false
  if ((Number(flags) & PF_EXITING) !== 0) return false
  return holder.startTime === undefined || holder.startTime === fields[19]
}

const readHolder = async (file: string): Promise<Holder | undefined> => {
  const [pid, startTime] = (await readFile(file, "utf8").catch(() => "")).trim().split(/\s+/)
  const parsed = Number.parseInt(pid ?? "", 10)
  return Number.isInteger(parsed) && parsed > 0 ? { pid: parsed, startTime } : undefined
}

const inUse = (directory: string, holder: Holder | undefined) =>
  new DataDirLockError({
    message: `The embedded database in ${directory} is in use by ${holder === undefined ? "another process" : `process ${holder.pid}`} (a running server?). Stop it first, or share a PostgreSQL database through DATABASE_URL.`
  })

const socketName = async (directory: string) => {
  const real = await realpath(directory)
  const { dev, ino } = await stat(real)
  return `\0waybill-data-dir-${createHash("sha256").update(`${real}\0${dev}\0${ino}`).digest("hex").slice(0, 40)}`
}

const bind = (name: string) =>
  new Promise<net.Server | "in-use">((resolve, reject) => {
    const server = net.createServer((socket) => socket.destroy())
    server.once("error", (error: NodeJS.ErrnoException) =>
      error.code === "EADDRINUSE" ? resolve("in-use") : reject(error)
    )
    server.listen({ path: name }, () => {
      // The lock must not keep the process alive on its own.
      server.unref()
      resolve(server)
    })
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Linux: the kernel-held lock, waiting for a holder that is exiting. */
const takeHeld = async (directory: string, file: string): Promise<() => Promise<void>> => {
  const name = await socketName(directory)
  const deadline = Date.now() + EXIT_WAIT_MS
  while (true) {
    const bound = await bind(name)
    if (bound !== "in-use") {
      await writeFile(file, `${process.pid} ${(await ownStartTime()) ?? ""}\n`, { mode: 0o600 })
      return async () => {
        bound.close()
        const holder = await readHolder(file)
        if (holder?.pid === process.pid) await unlink(file).catch(() => undefined)
      }
    }
    const holder = await readHolder(file)
    // A holder that is exiting (or has not written its pid yet) is waited for, a little.
    if (holder !== undefined && holder.pid !== process.pid && (await isLive(holder))) throw inUse(directory, holder)
    if (Date.now() > deadline) throw inUse(directory, holder)
    await sleep(20)
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Elsewhere: the lock file is the lock; a holder whose pid is gone is taken over. */
const takeFile = async (directory: string, file: string): Promise<() => Promise<void>> => {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: "wx", mode: 0o600 })
      return async () => {
        const holder = await readHolder(file)
        if (holder?.pid === process.pid) await unlink(file).catch(() => undefined)
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    const holder = await readHolder(file)
    if (holder !== undefined && holder.pid !== process.pid && alive(holder.pid)) throw inUse(directory, holder)
    await unlink(file).catch(() => undefined)
  }
  throw new Error(`could not create ${file}`)
}

/** Holds the lock of the configured embedded data directory for the life of the scope. @since 0.1.0 */
export const acquire = (database: DatabaseConfig) => {
  if (database._tag !== "Embedded" || database.dataDir === "memory://") return Effect.void
  const directory = database.dataDir
  const file = join(directory, fileName)
  return Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        await mkdir(directory, { recursive: true })
        return process.platform === "linux" ? await takeHeld(directory, file) : await takeFile(directory, file)
      },
      catch: (error) =>
        error instanceof DataDirLockError
          ? error
          : new DataDirLockError({ message: `Cannot lock ${file}: ${(error as Error).message}` })
    }),
    (release) => Effect.promise(release)
  )
}
