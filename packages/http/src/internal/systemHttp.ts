import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Availability } from "@waybill/core/Availability"
import { Stopping } from "@waybill/core/Stopping"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { WaybillApi } from "../Api.js"
import { Unavailable } from "../ApiError.js"

const unavailable = (message: string) => Effect.fail(new Unavailable({ message, issues: [] }))

export const SystemLive = HttpApiBuilder.group(WaybillApi, "system", (handlers) =>
  Effect.gen(function* () {
    const availability = yield* Effect.serviceOption(Availability)
    const stopping = yield* Effect.serviceOption(Stopping)
    return handlers
      .handle("health", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () => {
        // From the first moment of a stop: no more traffic, while requests received are answered.
        if (Option.isSome(stopping) && stopping.value.isStopping()) {
          return unavailable("The server is stopping; send requests to another instance.")
        }
        return Option.match(availability, {
          // Without an Availability layer the storage is in memory: always ready.
          onNone: () => Effect.succeed({ status: "ready" as const }),
          onSome: ({ check }) =>
            Effect.flatMap(check, (ready) =>
              ready
                ? Effect.succeed({ status: "ready" as const })
                : unavailable("The database cannot be reached; try again shortly.")
            )
        })
      })
  })
)
