/** @since 0.1.0 */

/** The operator console: its page and assets, as a router layer or a Fetch handler. @since 0.1.0 */
export * as Console from "./Console.js"
