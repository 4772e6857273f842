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
 * 1. `DraftService.act`, joining it: the draft's row locked, `Transition.transition` (activation's
 *    checks, the new status, the action record), the draft and its events written;
 * 2. `TourGenerator.runMaster(ref, { joinTransaction: true })`: the master claimed under the
 *    action's own row lock, its lead-time tours (up to `maxToursPerMaster`) and their
 *    `tour-created` events stored, its cursor moved.
 * The answer means the tours exist; if generation fails, nothing is written.
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
