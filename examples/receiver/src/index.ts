/**
 * @since 0.1.0
 */

/**
 * The receiver's settings, read from the environment.
 *
 * @since 0.1.0
 */
export * as Config from "./Config.js"

/**
 * The receiver itself: `start(config)` → `{ url, close }`.
 *
 * @since 0.1.0
 */
export * as Server from "./Server.js"
