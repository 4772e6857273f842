import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import { ReferenceData } from "@waybill/drafts/ReferenceData"
import * as Effect from "effect/Effect"
import { WaybillApi } from "../Api.js"

export const ReferenceDataLive = HttpApiBuilder.group(WaybillApi, "referenceData", (handlers) =>
  Effect.gen(function* () {
    const data = yield* ReferenceData
    const list = <A>(read: (workspaceId: CurrentWorkspace["Type"]["id"]) => Effect.Effect<ReadonlyArray<A>>) =>
      Effect.flatMap(CurrentWorkspace, (workspace) => Effect.map(read(workspace.id), (items) => ({ data: items })))
    return handlers
      .handle("transportShapes", () => list(data.transportShapes))
      .handle("vehicleClasses", () => list(data.vehicleClasses))
      .handle("products", () => list(data.products))
  })
)
