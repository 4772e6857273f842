/**
 * Actions of your own users, through the draft service directly (no HTTP, no API key): the
 * host names the actor, and the action record and its `transport-draft-action-created` event
 * carry it, so webhook receivers see who did it. The HTTP API records the request's API key
 * instead (`{ type: "api-key", id }`), and the generator the system.
 */
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import type { Actor } from "@waybill/drafts/Draft"
import { DraftService } from "@waybill/drafts/DraftService"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

// A user of your application, as your session middleware knows it.
interface OperatorUser {
  readonly id: string
  readonly workspace: string
}

// Any non-empty type names the actor: pick one your receivers recognise.
const actorOf = (user: OperatorUser): Actor => ({ type: "operator-user", id: user.id })

// The workspace the user works in; calls without an API key label the caller themselves.
const inWorkspaceOf = (user: OperatorUser) =>
  Effect.provideService(CurrentWorkspace, {
    id: Schema.decodeSync(WorkspaceId)(user.workspace),
    apiKeyId: `host:${user.id}`
  })

/**
 * Creates a recurring master and activates it on behalf of `user`; returns the action record.
 */
export const activateLine = (user: OperatorUser) =>
  Effect.gen(function* () {
    const drafts = yield* DraftService
    const master = yield* drafts.create({
      origin: "manual",
      status: "draft",
      name: "ACME line {{ weekday }}",
      transportShapeId: "acme_line",
      transport: {
        multiStopData: {
          stops: [
            { address: { city: "Hamburg" }, timeWindow: { from: "06:00", to: "08:00" } },
            { address: { city: "Berlin" }, timeWindow: { from: "13:00", to: "15:00" } }
          ]
        },
        tour: { vehicleClass: "acme_truck" }
      },
      recurringSchedule: { cronExpressions: ["0 6 * * 1-5"], timezone: "Europe/Berlin", leadTimeDays: 7 }
    })
    const { action } = yield* drafts.act(master.id, { type: "activate-recurring" }, actorOf(user))
    return action
  }).pipe(inWorkspaceOf(user))
