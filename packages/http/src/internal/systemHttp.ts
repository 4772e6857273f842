import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { WaybillApi } from "../Api.js"

export const SystemLive = HttpApiBuilder.group(WaybillApi, "system", (handlers) =>
  handlers.handle("health", () => Effect.succeed({ status: "ok" as const }))
)
