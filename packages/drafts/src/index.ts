/** @since 0.1.0 */

/** Starting a recurring master: its status change, its events and its first tours, in one transaction. @since 0.2.0 */
export * as Activation from "./Activation.js"

/** The body of `POST /drafts` and the pure creation rules. @since 0.1.0 */
export * as CreateDraft from "./CreateDraft.js"

/** The transport draft, its statuses, actions and action records. @since 0.1.0 */
export * as Draft from "./Draft.js"

/** The typed failures of the draft service. @since 0.1.0 */
export * as DraftError from "./DraftError.js"

/** The events drafts raise and their payloads. @since 0.1.0 */
export * as DraftEvents from "./DraftEvents.js"

/** The storage port for drafts, its cursors and in-memory layer. @since 0.1.0 */
export * as DraftRepository from "./DraftRepository.js"

/** The draft service over its ports. @since 0.1.0 */
export * as DraftService from "./DraftService.js"

/** ISO 3166-1 country codes (alpha-3 and alpha-2). @since 0.1.0 */
export * as Iso3166 from "./Iso3166.js"

/** The product-evaluation port and the reference evaluator. @since 0.1.0 */
export * as ProductEvaluator from "./ProductEvaluator.js"

/** A recurring draft as the recurring generator reads it: its `RecurringMaster` and claimed state. @since 0.1.0 */
export * as RecurringDraft from "./RecurringDraft.js"

/** Transport shapes, vehicle classes and products behind a port. @since 0.1.0 */
export * as ReferenceData from "./ReferenceData.js"

/** The draft status machine. @since 0.1.0 */
export * as Transition from "./Transition.js"

/** The transport shape product evaluation requires, and its strict parse. @since 0.1.0 */
export * as TransportForProducts from "./TransportForProducts.js"
