/** @since 0.1.0 */

/** Helpers for receivers of the catalogue's payloads: timestamp normalisation, leg-load outcomes. @since 0.1.0 */
export * as Consumer from "./Consumer.js"

/** Renders docs/events.md from the catalogue. @since 0.1.0 */
export * as Docs from "./Docs.js"

/** Schemas of the entities event payloads carry. @since 0.1.0 */
export * as Entity from "./Entity.js"

/** Schemas of the action records event payloads carry next to the entity acted on. @since 0.1.0 */
export * as EntityAction from "./EntityAction.js"

/** The delivery envelope `{ id, type, createdAt, payload }` and its decoder. @since 0.1.0 */
export * as Envelope from "./Envelope.js"

/** `POST /events`: validate, redact and record an event through the outbox. @since 0.2.0 */
export * as EventIntake from "./EventIntake.js"

/** The outbox port producers publish events through. @since 0.1.0 */
export * as EventOutbox from "./EventOutbox.js"

/** The 60 event types. @since 0.1.0 */
export * as EventType from "./EventType.js"

/** The filter-field catalogue per event type and its guarded roots. @since 0.1.0 */
export * as FilterFields from "./FilterFields.js"

/** The OpenAPI 3.1 `webhooks` section derived from the catalogue. @since 0.1.0 */
export * as OpenApi from "./OpenApi.js"

/** Payload schemas per event type and their decoder. @since 0.1.0 */
export * as Payload from "./Payload.js"

/** Producer rules and the redaction `POST /events` applies. @since 0.1.0 */
export * as Producer from "./Producer.js"

/** Custom property definitions and the port that provides them per workspace. @since 0.1.0 */
export * as PropertyDefinition from "./PropertyDefinition.js"

/** Schemas of the tasks the task events carry, and of the entity reference next to them. @since 0.1.0 */
export * as Task from "./Task.js"
