/**
 * Mounting Waybill inside an existing Node backend: the wiring, the Node adapter, and runnable
 * examples for node:http, Express and Hono (`src/node-http.ts`, `src/express.ts`, `src/hono.ts`).
 *
 * @since 0.1.0
 */

/**
 * Runs an example file directly.
 *
 * @since 0.1.0
 */
export * as Main from "./Main.js"

/**
 * A Fetch-style handler as a Node `(req, res)` listener.
 *
 * @since 0.1.0
 */
export * as NodeListener from "./NodeListener.js"

/**
 * The reference server's ports and background loops behind the web handler.
 *
 * @since 0.1.0
 */
export * as Waybill from "./Waybill.js"
