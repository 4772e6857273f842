/**
 * The key that encrypts webhook secrets at rest: `WAYBILL_SECRET_KEY`, or, with the embedded
 * database only, generated once and kept beside the data.
 * @since 0.1.0
 */

import { randomBytes } from "node:crypto"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { ServerConfig } from "./Config.js"

/** The server cannot start without a usable key. @since 0.1.0 */
export class SecretKeyError extends Data.TaggedError("SecretKeyError")<{ readonly message: string }> {}

const KEY = /^[0-9a-f]{64}$/

/** Resolves the key; never logs or returns it in clear. @since 0.1.0 */
export const resolve = (
  config: Pick<ServerConfig, "secretKey" | "database">
): Effect.Effect<Redacted.Redacted<string>, SecretKeyError> => {
  if (Option.isSome(config.secretKey)) {
    return Effect.succeed(Redacted.make(Redacted.value(config.secretKey.value).toLowerCase()))
  }
  const database = config.database
  if (database._tag === "Postgres") {
    return Effect.fail(
      new SecretKeyError({
        message:
          "WAYBILL_SECRET_KEY is required with DATABASE_URL: every process sharing the database must encrypt webhook secrets with the same key (generate one with: openssl rand -hex 32)"
      })
    )
  }
  if (database.dataDir === "memory://") return Effect.sync(() => Redacted.make(randomBytes(32).toString("hex")))
  const file = join(database.dataDir, "secret-key")
  return Effect.tryPromise({
    try: async () => {
      const existing = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return undefined
        throw error
      })
      if (existing !== undefined) {
        const key = existing.trim()
        if (!KEY.test(key)) throw new Error(`${file} does not hold 64 hexadecimal characters`)
        return Redacted.make(key)
      }
      await mkdir(database.dataDir, { recursive: true })
      const key = randomBytes(32).toString("hex")
      // "wx": never overwrite a key another process wrote meanwhile.
      await writeFile(file, `${key}\n`, { mode: 0o600, flag: "wx" })
      return Redacted.make(key)
    },
    catch: (error) =>
      new SecretKeyError({
        message: `Cannot read or create the secret key in ${database.dataDir}: ${(error as Error).message}`
      })
  })
}
