/** Workspaces (tenants): every resource belongs to exactly one. @since 0.1.0 */
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"

/** @since 0.1.0 */
export const WorkspaceId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/),
  Schema.brand("WorkspaceId")
).annotations({ identifier: "WorkspaceId" })

/** @since 0.1.0 */
export type WorkspaceId = typeof WorkspaceId.Type

/**
 * The workspace of the current request, provided by the API authentication; `consoleToken` when
 * a console token (not an API key) authenticated it.
 * @since 0.1.0
 */
export class CurrentWorkspace extends Context.Tag("@waybill/core/CurrentWorkspace")<
  CurrentWorkspace,
  {
    readonly id: WorkspaceId
    readonly apiKeyId: string
    readonly consoleToken?:
      | { readonly scope: "read" | "manage"; readonly label: string | null; readonly expiresAt: number }
      | undefined
  }
>() {}
