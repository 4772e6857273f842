import { ConsoleTokens, validateMint } from "@waybill/core/ConsoleTokens"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as ApiError from "../ApiError.js"
import { type Operations, serveGroup } from "./operations.js"

const noSuchToken = (id: string) =>
  new ApiError.NotFound({ message: `No live console token ${JSON.stringify(id.slice(0, 100))}`, issues: [] })

/** The console-tokens group's operations: mint, list and revoke in the caller's workspace. */
export const consoleTokensOperations = Effect.map(
  ConsoleTokens,
  (tokens) =>
    ({
      create: ({ payload, base }) =>
        Effect.gen(function* () {
          const options = validateMint(payload)
          if (Either.isLeft(options)) return yield* Effect.fail(ApiError.badRequest(options.left))
          const workspace = yield* CurrentWorkspace
          const { record, token } = yield* tokens.mint(workspace.id, options.right)
          const value = Redacted.value(token)
          return {
            id: record.id,
            token: value,
            scope: record.scope,
            label: record.label,
            expiresAt: record.expiresAt,
            url: `${base ?? ""}/console#token=${value}`
          }
        }),
      list: () =>
        Effect.flatMap(CurrentWorkspace, (workspace) =>
          Effect.map(tokens.list(workspace.id), (records) => ({
            data: records.map(({ id, scope, label, createdAt, expiresAt }) => ({
              id,
              scope,
              label,
              createdAt,
              expiresAt
            }))
          }))
        ),
      revoke: ({ path }) =>
        Effect.flatMap(CurrentWorkspace, (workspace) =>
          Effect.flatMap(tokens.revoke(workspace.id, path.id), (revoked) =>
            revoked ? Effect.void : Effect.fail(noSuchToken(path.id))
          )
        )
    }) satisfies Operations<"consoleTokens">
)

export const ConsoleTokensLive = serveGroup("consoleTokens", consoleTokensOperations, { withBase: true })
