/** @since 0.1.0 */

/** An `HttpSender` over `@effect/platform`'s `HttpClient`, the SSRF rules checked before each request. @since 0.1.0 */
export * as HttpClientSender from "./HttpClientSender.js"

/** The Node `HttpSender` over undici (SSRF checked at connect time) and the system `HostResolver`. @since 0.1.0 */
export * as WebhookSender from "./WebhookSender.js"
