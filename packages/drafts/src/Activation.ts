/**
 * Starting a recurring master (`activate-recurring`, `resume-recurring`): its status change, its
 * events and its first tours, in one transaction. The steps, in order: `layer`.
 * @since 0.2.0
 */
import { Transactor } from "@waybill/core/Transactor"
import { CurrentWorkspace } from "@waybill/core/Workspace"
import { TourGenerator } from "@waybill/recurring/TourGenerator"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ActionType } from "./Draft.js"
import { DraftService } from "./DraftService.js"

const starting: ReadonlySet<ActionType> = new Set(["activate-recurring", "resume-recurring"])

/**
 * Whether an action starts a master's generation: `activate-recurring` and `resume-recurring`,
 * the actions into `active-recurring`.
 * @since 0.2.0
 */
export const startsGeneration = (type: ActionType): boolean => starting.has(type)

/**
 * The draft service whose actions that start generation also store the master's first tours. In
 * one transaction, opened here, in order:
 * 1. `DraftService.act` joins it: the draft's row locked, `Transition.transition` (activation's
 *    checks, the new status, the action record), the draft written and its lifecycle and
 *    `transport-draft-action-created` events published;
 * 2. `TourGenerator.runMaster(ref, { joinTransaction: true })`: the master claimed (its row lock
 *    is the action's own, so nothing skips it), its lead-time tours (up to `maxToursPerMaster`;
 *    the loop adds the rest) stored with their `tour-created` events, its cursor moved.
 * All commit together, so the answer means the tours exist; if generation fails, the action fails
 * and nothing is written. Other actions pass through.
 * @since 0.2.0
 */
export const layer: Layer.Layer<DraftService, never, DraftService | TourGenerator | Transactor> = Layer.effect(
  DraftService,
  Effect.gen(function* () {
    const drafts = yield* DraftService
    const generator = yield* TourGenerator
    const transactor = yield* Transactor
    return DraftService.of({
      ...drafts,
      act: (id, request, actor) =>
        startsGeneration(request.type)
          ? transactor.withTransaction(
              Effect.tap(drafts.act(id, request, actor), (result) =>
                Effect.flatMap(CurrentWorkspace, (workspace) =>
                  generator.runMaster(
                    { workspaceId: workspace.id, id: result.transportDraft.id },
                    { joinTransaction: true }
                  )
                )
              )
            )
          : drafts.act(id, request, actor)
    })
  })
)
