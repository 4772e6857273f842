/** @since 0.1.0 */

/** The HttpApi definition. @since 0.1.0 */
export * as Api from "./Api.js"

/** The contract's error bodies. @since 0.1.0 */
export * as ApiError from "./ApiError.js"

/** API-key authentication. @since 0.1.0 */
export * as Authentication from "./Authentication.js"

/** A typed client for the API: base URL and API key in, one method per endpoint out. @since 0.1.0 */
export * as Client from "./Client.js"

/** The operator console's own routes: editing a webhook in place, who is signed in. @since 0.1.0 */
export * as ConsoleApi from "./ConsoleApi.js"

/** Console tokens: minted, listed and revoked with an API key. @since 0.3.0 */
export * as ConsoleTokensApi from "./ConsoleTokensApi.js"

/** Drafts, actions and product evaluation endpoints. @since 0.1.0 */
export * as DraftsApi from "./DraftsApi.js"
/** Handlers, server layer and web handler. @since 0.1.0 */
export * as Http from "./Http.js"
/** One workspace's API in process: every route a workspace has, as Promise-returning functions. @since 0.3.0 */
export * as InProcess from "./InProcess.js"

/** Reference-data endpoints. @since 0.1.0 */
export * as ReferenceDataApi from "./ReferenceDataApi.js"

/** System endpoints. @since 0.1.0 */
export * as SystemApi from "./SystemApi.js"

/** Tours endpoints. @since 0.1.0 */
export * as ToursApi from "./ToursApi.js"
/** What a refused in-process call rejects with: the HTTP error body of the same refusal. @since 0.3.0 */
export * as WaybillError from "./WaybillError.js"
/** Webhooks, deliveries, alerts and event publishing endpoints. @since 0.1.0 */
export * as WebhooksApi from "./WebhooksApi.js"
