/**
 * The `RecurringMasterRepository` port on PostgreSQL, safe with several processes on one database
 * (docs/internals.md, PgRecurringMasterRepository).
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { WorkspaceId } from "@waybill/core/Workspace"
import { Draft } from "@waybill/drafts/Draft"
import { DraftService } from "@waybill/drafts/DraftService"
import { toClaimedMaster } from "@waybill/drafts/RecurringDraft"
import { type MasterState, RecurringMasterRepository } from "@waybill/recurring/RecurringMasterRepository"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const decodeDraft = Schema.decodeUnknownSync(Draft)
const decodeWorkspace = Schema.decodeUnknownSync(WorkspaceId)

interface MasterRow {
  readonly workspace_id: string
  readonly document: unknown
  readonly generated_until: number | null
}

const toState = (row: MasterRow): Option.Option<MasterState> =>
  toClaimedMaster(decodeWorkspace(row.workspace_id), decodeDraft(row.document), row.generated_until)

/**
 * The port; `end` runs in the generator's transaction, so the action, its events and the last
 * tours commit together.
 * @since 0.1.0
 */
export const layer: Layer.Layer<RecurringMasterRepository, never, SqlClient.SqlClient | DraftService> = Layer.effect(
  RecurringMasterRepository,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const drafts = yield* DraftService
    return RecurringMasterRepository.of({
      // States, not bare refs: the generator skips a master with nothing due without a
      // transaction. The partial index drafts_running_masters_idx serves this query.
      list: (now) =>
        sql<MasterRow>`
          SELECT workspace_id, document, generated_until FROM drafts
          WHERE status = 'active-recurring' OR (status = 'paused-recurring' AND ends_at <= ${now})`.pipe(
          Effect.map(Arr.filterMap(toState)),
          Effect.orDie
        ),
      claim: (ref) =>
        sql<MasterRow>`
          SELECT workspace_id, document, generated_until FROM drafts
          WHERE workspace_id = ${ref.workspaceId} AND id = ${ref.id}
            AND status IN ('active-recurring', 'paused-recurring')
          FOR UPDATE SKIP LOCKED`.pipe(
          Effect.map((rows) => Option.flatMap(Option.fromNullable(rows[0]), toState)),
          Effect.orDie
        ),
      // GREATEST ignores NULL, so the first advance sets the cursor and later ones only raise it.
      advance: (ref, cursor) =>
        sql`
          UPDATE drafts SET generated_until = GREATEST(generated_until, ${cursor})
          WHERE workspace_id = ${ref.workspaceId} AND id = ${ref.id}`.pipe(Effect.asVoid, Effect.orDie),
      end: (ref) =>
        drafts.endBySystem(ref.workspaceId, ref.id, { joinTransaction: true }).pipe(Effect.asVoid, Effect.orDie)
    })
  })
)
