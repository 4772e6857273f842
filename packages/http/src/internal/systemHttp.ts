import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Availability } from "@waybill/core/Availability"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { WaybillApi } from "../Api.js"
import { Unavailable } from "../ApiError.js"

export const SystemLive = HttpApiBuilder.group(WaybillApi, "system", (handlers) =>
  Effect.map(Effect.serviceOption(Availability), (availability) =>
    handlers
      .handle("health", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () =>
        Option.match(availability, {
          // Without an Availability layer the storage is in memory: always ready.
          onNone: () => Effect.succeed({ status: "ready" as const }),
          onSome: ({ check }) =>
            Effect.flatMap(check, (ready) =>
              ready
                ? Effect.succeed({ status: "ready" as const })
                : Effect.fail(
                    new Unavailable({ message: "The database cannot be reached; try again shortly.", issues: [] })
                  )
            )
        })
      )
  )
)
