/**
 * Mounting Waybill inside an existing Node backend: runnable
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
