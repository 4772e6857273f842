/**
 * Schemas of the tasks the `task-*` events carry, and of the reference to the entity a task is
 * about. Tasks are open like every entity.
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { AnyJson, OpenFields, OpenObject, Properties, Timestamp } from "./Entity.js"
import { EntityId } from "./internal/annotations.js"
import { oneOf, optional } from "./internal/schemas.js"

/**
 * The task statuses that raise events (`Producer.taskEvents`); `task.status` accepts any value,
 * as the spec names none.
 * @since 0.1.0
 */
export const TaskStatus = oneOf("open", "completed", "skipped", "cancelled").annotations({
  identifier: "TaskStatus"
})

/** @since 0.1.0 */
export type TaskStatus = typeof TaskStatus.Type

/** What closing a task produced: `formOutput` is the validated form output by form element id. @since 0.1.0 */
export const TaskOutcome = Schema.Struct({ formOutput: optional(OpenObject) }, OpenFields).annotations({
  identifier: "TaskOutcome"
})

// The seed names these without types: any JSON value, still offered to filters.
const taskFields = {
  kind: optional(AnyJson(Schema.String)),
  status: optional(AnyJson(TaskStatus)),
  assignee: optional(AnyJson(Schema.String)),
  origin: optional(AnyJson(Schema.String)),
  templateId: optional(AnyJson(Schema.String)),
  templateKey: optional(AnyJson(Schema.String)),
  createdAt: optional(AnyJson(Timestamp)),
  updatedAt: optional(AnyJson(Timestamp)),
  dueAt: optional(AnyJson(Timestamp)),
  closedAt: optional(AnyJson(Timestamp))
}

const templateKeyNeedsTemplateId = <A extends { readonly templateId?: unknown; readonly templateKey?: unknown }>(
  task: A
) =>
  task.templateKey !== undefined && task.templateId === undefined
    ? { path: ["templateKey"], message: "is only present on a task created from a template (templateId)" }
    : undefined

const taskEntity = <Fields extends Schema.Struct.Fields>(identifier: string, description: string, fields: Fields) =>
  Schema.Struct({ id: Schema.String, ...taskFields, ...fields, properties: optional(Properties) }, OpenFields)
    .pipe(
      Schema.filter(templateKeyNeedsTemplateId, {
        jsonSchema: { dependentRequired: { templateKey: ["templateId"] } }
      })
    )
    .annotations({ identifier, description, [EntityId]: "task" })

/** A task; one made from a template carries `templateId`, and `templateKey` if the template has one. @since 0.1.0 */
export const Task = taskEntity("Task", "A task, as it is after the transition.", {
  outcome: optional(Schema.NullOr(TaskOutcome))
})

/** @since 0.1.0 */
export type Task = typeof Task.Type

/** The task of `task-completed`: it carries the complete validated form output. @since 0.1.0 */
export const CompletedTask = taskEntity(
  "CompletedTask",
  "A completed task; outcome.formOutput holds the complete validated form output keyed by form element id.",
  { outcome: Schema.Struct({ formOutput: OpenObject }, OpenFields).annotations({ identifier: "CompletedTaskOutcome" }) }
)

/** @since 0.1.0 */
export type CompletedTask = typeof CompletedTask.Type

/** A reference to the entity a task is about; it never embeds the entity. @since 0.1.0 */
export const ReferencedEntity = Schema.Struct({
  orn: Schema.String,
  type: Schema.String,
  id: Schema.String
}).annotations({ identifier: "ReferencedEntity", description: "A reference (orn, type, id); never the entity." })

/** @since 0.1.0 */
export type ReferencedEntity = typeof ReferencedEntity.Type
