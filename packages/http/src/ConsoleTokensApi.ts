/**
 * Console tokens (contract §5): a host mints one for each of its own users as they sign in, so that the user
 * can work in the operator console of one workspace without an API key. Minting, listing and
 * revoking take an API key; a console token can do none of them.
 * @since 0.3.0
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { ConsoleTokenInfo, ConsoleTokenScope, MintRequest } from "@waybill/core/ConsoleTokens"
import * as Schema from "effect/Schema"
import { NotFound } from "./ApiError.js"
import { Authentication } from "./Authentication.js"
import { documentedUnknown } from "./internal/openApi.js"

/** A minted token: its value is in this answer only. @since 0.3.0 */
export const MintedConsoleToken = Schema.Struct({
  id: Schema.String,
  token: Schema.String,
  scope: ConsoleTokenScope,
  label: Schema.NullOr(Schema.String),
  expiresAt: Schema.Int,
  /** The console, signed in with the token: `<base>/console#token=wbc_…`. */
  url: Schema.String
}).annotations({ identifier: "MintedConsoleToken" })

const tokenId = HttpApiSchema.param("id", Schema.String)

/** The console-tokens group. @since 0.3.0 */
export class ConsoleTokensApi extends HttpApiGroup.make("consoleTokens")
  .add(
    HttpApiEndpoint.post("create", "/console/tokens")
      .setPayload(documentedUnknown(MintRequest, "CreateConsoleTokenRequest", { checkOnEncode: true }))
      .addSuccess(MintedConsoleToken, { status: 201 })
      .annotate(
        OpenApi.Description,
        'Mints a console token for this workspace: ttlSeconds 60 to 604800 (default 3600), scope "read" (the console\'s pages) or "manage" (also creating, editing, deleting, rotating, disabling, enabling webhooks, resend and replay; the default), an optional label of at most 100 characters. The token is in this answer only and is stored hashed; url opens the console signed in with it (the token in the fragment, which browsers never send). A console token cannot mint, list or revoke tokens.'
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/console/tokens")
      .addSuccess(Schema.Struct({ data: Schema.Array(ConsoleTokenInfo) }))
      .annotate(
        OpenApi.Description,
        "The workspace's live console tokens (neither expired nor revoked), newest first, without their values"
      )
  )
  .add(
    HttpApiEndpoint.del("revoke")`/console/tokens/${tokenId}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFound)
      .annotate(OpenApi.Description, "Revokes a live console token at once: its next request is answered 401")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Console tokens")
  .annotate(OpenApi.Description, "Scoped, expiring, revocable access to the operator console for a host's own users") {}
