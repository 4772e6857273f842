import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { fromIssues } from "@waybill/core/ValidationError"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import { TourQuery, toListQuery } from "@waybill/recurring/TourQuery"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { WaybillApi } from "../Api.js"
import { badRequest, NotFound } from "../ApiError.js"

export const ToursLive = HttpApiBuilder.group(WaybillApi, "tours", (handlers) =>
  Effect.gen(function* () {
    const tours = yield* TourQuery
    return handlers
      .handle("get", ({ path }) =>
        Effect.gen(function* () {
          const workspace = yield* CurrentWorkspace
          const tour = yield* tours.get(workspace.id, path.id)
          if (Option.isNone(tour)) {
            // Another workspace's tour looks exactly like a missing one.
            return yield* Effect.fail(
              new NotFound({ message: `No tour with id ${JSON.stringify(path.id)} exists.`, issues: [] })
            )
          }
          return tour.value
        })
      )
      .handle("list", ({ urlParams }) =>
        Effect.gen(function* () {
          const workspace = yield* CurrentWorkspace
          const query = toListQuery(urlParams)
          if (Either.isLeft(query)) return yield* Effect.fail(badRequest(fromIssues(query.left, "query")))
          return yield* tours.list(workspace.id, query.right)
        })
      )
  })
)
