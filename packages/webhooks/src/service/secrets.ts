// The webhook service and secrets: sealing a webhook's authentication, keeping the stored secret
// through an edit, and `rotate`.
import * as ValidationError from "@waybill/core/ValidationError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { keptSecretField } from "../Registration.js"
import { validateRotation, withPrevious } from "../SecretRotation.js"
import { type OpenAuth, type SealedAuth, sealedSecretOf, secretContext, type Webhook } from "../Webhook.js"
import { answer, change, type Env, nowSeconds } from "./env.js"

/** `auth` with its secret sealed for the webhook `id`. */
export const seal = (env: Env, id: string, auth: OpenAuth): Effect.Effect<SealedAuth> => {
  const context = secretContext(id, auth.type)
  switch (auth.type) {
    case "basic":
      return Effect.map(env.secretBox.seal(auth.password, context), (password) => ({
        type: "basic" as const,
        username: auth.username,
        password
      }))
    case "bearer":
      return Effect.map(env.secretBox.seal(auth.token, context), (token) => ({ type: "bearer" as const, token }))
    case "hmac":
      return Effect.map(env.secretBox.seal(auth.secret, context), (secret) => ({
        type: "hmac" as const,
        secret,
        scheme: auth.scheme
      }))
  }
}

/**
 * An edit request with the stored secret in place of one it leaves to the stored value, so the
 * edit is validated (and sealed again) exactly as a registration.
 */
export const withKeptSecret = (env: Env, current: Webhook, input: unknown) =>
  Option.match(keptSecretField(input, current.auth.type), {
    onNone: () => Effect.succeed(input),
    onSome: (field) =>
      Effect.map(
        env.secretBox
          .open(sealedSecretOf(current.auth), secretContext(current.id, current.auth.type))
          .pipe(Effect.orDie),
        (secret) => {
          const request = input as { readonly auth: Record<string, unknown> }
          return { ...request, auth: { ...request.auth, [field]: Redacted.value(secret) } }
        }
      )
  })

/** `WebhookService.rotate` over `env`. */
export const makeRotate = (env: Env) =>
  Effect.fn("WebhookService.rotate")(function* (id: string, input: unknown) {
    const now = yield* nowSeconds
    const stored = yield* change(env, id, (current) =>
      Effect.gen(function* () {
        const rotation = yield* Either.match(validateRotation(input, current.auth), {
          onLeft: (issues) => Effect.fail(ValidationError.fromIssues(issues, "rotation")),
          onRight: Effect.succeed
        })
        const auth = yield* withPrevious(env.secretBox, {
          webhookId: id,
          replaced: current.auth,
          rotated: yield* seal(env, id, rotation.auth),
          overlapSeconds: rotation.overlapSeconds,
          now
        })
        return { ...current, auth } satisfies Webhook
      })
    )
    return yield* answer(env, stored, now)
  })
