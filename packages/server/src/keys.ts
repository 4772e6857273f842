#!/usr/bin/env node
/**
 * API keys of the reference server (`npx waybill-keys <command>`, `npm run keys --` in this
 * repository; see `usage`), on the server's database. Exit codes: 0 done, 1 failed, 2 wrong usage.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as ApiKeys from "@waybill/core/ApiKeys"
import { WorkspaceId } from "@waybill/core/Workspace"
import * as Database from "@waybill/store-pg/Database"
import * as PgApiKeyStore from "@waybill/store-pg/PgApiKeyStore"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { databaseConfig, settings as readSettings, type ServerConfig } from "./Config.js"
import * as DataDirLock from "./DataDirLock.js"
import * as Startup from "./Startup.js"

const usage = `Usage: ${Startup.keysCommand} <command>

  create --workspace <id>   issue an API key for a workspace (printed once, stored hashed)
  list                      list keys: id, workspace, created, revoked
  revoke <id>               revoke a key

Uses the server's configuration: DATABASE_URL, else the embedded database in WAYBILL_DATA_DIR
(default .waybill/data). Stop a server that uses the same embedded data directory first.`

class CliError extends Data.TaggedError("CliError")<{ readonly message: string; readonly exitCode: number }> {}

const wrongUsage = (message: string) => new CliError({ message: `${message}\n\n${usage}`, exitCode: 2 })

type Command =
  | { readonly _tag: "Create"; readonly workspaceId: WorkspaceId }
  | { readonly _tag: "List" }
  | { readonly _tag: "Revoke"; readonly id: string }
  | { readonly _tag: "Help" }

const parse = (args: ReadonlyArray<string>): Either.Either<Command, CliError> => {
  const [command, ...rest] = args
  switch (command) {
    case "create": {
      const at = rest.indexOf("--workspace")
      const value = at >= 0 ? rest[at + 1] : undefined
      if (value === undefined || rest.length !== 2) return Either.left(wrongUsage("create needs --workspace <id>"))
      return Either.mapBoth(Schema.decodeUnknownEither(WorkspaceId)(value), {
        onLeft: () => wrongUsage(`invalid workspace id ${JSON.stringify(value)}: use letters, digits, _ . -`),
        onRight: (workspaceId): Command => ({ _tag: "Create", workspaceId })
      })
    }
    case "list":
      return rest.length === 0 ? Either.right({ _tag: "List" }) : Either.left(wrongUsage("list takes no arguments"))
    case "revoke":
      return rest.length === 1 ? Either.right({ _tag: "Revoke", id: rest[0]! }) : Either.left(wrongUsage("revoke <id>"))
    case undefined:
    case "help":
    case "--help":
    case "-h":
      return Either.right({ _tag: "Help" })
    default:
      return Either.left(wrongUsage(`unknown command ${JSON.stringify(command)}`))
  }
}

const time = (seconds: number | null) => (seconds === null ? "-" : new Date(seconds * 1000).toISOString())

const table = (rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join("  ")
        .trimEnd()
    )
    .join("\n")
}

// Settings, database and lock failures: the same one line as the server's.
const failure = (error: unknown, settings?: ServerConfig) =>
  error instanceof CliError
    ? error
    : new CliError({
        message: Option.getOrElse(Startup.describeFailure(error, settings), () => String(error)),
        exitCode: 1
      })

const run = (command: Command) =>
  Effect.gen(function* () {
    if (command._tag === "Help") return yield* Effect.sync(() => console.log(usage))
    const configured = yield* Effect.mapError(readSettings, (error) => failure(error))
    yield* Effect.mapError(runWith(command, configured), (error) => failure(error, configured))
  })

const runWith = (command: Exclude<Command, { readonly _tag: "Help" }>, configured: ServerConfig) =>
  Effect.gen(function* () {
    yield* DataDirLock.acquire(configured.database)
    const keys = ApiKeys.layer([]).pipe(
      Layer.provide(PgApiKeyStore.layer),
      Layer.provide(Database.layer(databaseConfig(configured)))
    )
    yield* Effect.gen(function* () {
      const service = yield* ApiKeys.ApiKeys
      switch (command._tag) {
        case "Create": {
          const { key, record } = yield* service.create(command.workspaceId)
          console.log(
            `Created ${record.id} for workspace ${record.workspaceId}. The key is shown once; only its hash is stored:`
          )
          console.log(Redacted.value(key))
          return
        }
        case "List": {
          const records = yield* service.list
          if (records.length === 0)
            console.log(`No keys stored. Create one with: ${Startup.keysCommand} create --workspace <id>`)
          else {
            console.log(
              table([
                ["id", "workspace", "created", "revoked"],
                ...records.map((record) => [
                  record.id,
                  record.workspaceId,
                  time(record.createdAt),
                  time(record.revokedAt)
                ])
              ])
            )
          }
          // Keys from the environment live nowhere else; say so rather than hide them.
          if (Option.isSome(configured.apiKeys)) {
            console.log(`WAYBILL_API_KEYS also configures ${configured.apiKeys.value.length} key(s) (ids env-1...).`)
          }
          return
        }
        case "Revoke": {
          const revoked = yield* service.revoke(command.id)
          if (!revoked) return yield* new CliError({ message: `No active key ${command.id}`, exitCode: 1 })
          console.log(`Revoked ${command.id}`)
        }
      }
    }).pipe(Effect.provide(keys))
  }).pipe(Effect.scoped)

const program = Effect.suspend(() => parse(process.argv.slice(2))).pipe(
  Effect.flatMap(run),
  Effect.mapError((error) => failure(error)),
  Effect.tapError((error) => Effect.sync(() => console.error(error.message))),
  Logger.withMinimumLogLevel(LogLevel.Warning)
)

program.pipe(
  NodeRuntime.runMain({
    disableErrorReporting: true,
    teardown: (exit, onExit) =>
      onExit(
        Exit.isSuccess(exit)
          ? 0
          : Option.match(Cause.failureOption(exit.cause), {
              onNone: () => 1,
              onSome: (error) => (error instanceof CliError ? error.exitCode : 1)
            })
      )
  })
)
