/**
 * @since 0.1.0
 */

/**
 * The recurring schedule: schema, validation, trigger instants.
 *
 * @since 0.1.0
 */
export * as Schedule from "./Schedule.js"

/**
 * The one wall-clock resolver and calendar arithmetic in a time zone.
 *
 * @since 0.1.0
 */
export * as WallClock from "./WallClock.js"
