import { fromIssues } from "@waybill/core/ValidationError"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import { TourQuery, toListQuery } from "@waybill/recurring/TourQuery"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { badRequest, NotFound } from "../ApiError.js"
import { type Operations, serveGroup } from "./operations.js"

/** The tours group's operations. */
export const toursOperations = Effect.map(
  TourQuery,
  (tours) =>
    ({
      get: ({ path }) =>
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
        }),
      list: ({ urlParams }) =>
        Effect.gen(function* () {
          const workspace = yield* CurrentWorkspace
          const query = toListQuery(urlParams)
          if (Either.isLeft(query)) return yield* Effect.fail(badRequest(fromIssues(query.left, "query")))
          return yield* tours.list(workspace.id, query.right)
        })
    }) satisfies Operations<"tours">
)

export const ToursLive = serveGroup("tours", toursOperations)
