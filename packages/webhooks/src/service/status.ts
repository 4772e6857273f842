// `disable` and `enable`: a webhook's status, and its waiting deliveries held or released with it.
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Webhook } from "../Webhook.js"
import { answer, change, type Env, unchanged } from "./env.js"

/** The status operations over `env`. */
export const make = (env: Env) => {
  const disable = Effect.fn("WebhookService.disable")(function* (id: string) {
    const now = yield* Clock.currentTimeMillis
    const stored = yield* change(
      env,
      id,
      (current) =>
        Effect.succeed(
          current.status === "disabled"
            ? unchanged
            : ({
                ...current,
                status: "disabled",
                disabledReason: "manual",
                disabledAt: Math.floor(now / 1000)
              } satisfies Webhook)
        ),
      (webhook) => env.deliveryStore.hold(webhook.workspaceId, webhook.id, now)
    )
    return yield* answer(env, stored, Math.floor(now / 1000))
  })

  const enable = Effect.fn("WebhookService.enable")(function* (id: string) {
    const now = yield* Clock.currentTimeMillis
    const stored = yield* change(
      env,
      id,
      (current) => {
        if (current.status === "enabled") return Effect.succeed(unchanged)
        const { disabledReason: _reason, disabledAt: _at, ...rest } = current
        return Effect.succeed({ ...rest, status: "enabled" } satisfies Webhook)
      },
      (webhook) => env.deliveryStore.release(webhook.workspaceId, webhook.id, now)
    )
    return yield* answer(env, stored, Math.floor(now / 1000))
  })

  return { disable, enable }
}
