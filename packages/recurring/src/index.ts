/** @since 0.1.0 */

/** Template names of generated tours (`{{ weekday }}`, `{{ date }}`). @since 0.1.0 */
export * as NameTemplate from "./NameTemplate.js"

/** Expansion of a master into occurrences, the horizon, the dry run. @since 0.1.0 */
export * as Occurrence from "./Occurrence.js"

/** The master as the engine sees it. @since 0.1.0 */
export * as RecurringMaster from "./RecurringMaster.js"

/** The port to recurring masters (list, claim, advance, end) and its in-memory layer. @since 0.1.0 */
export * as RecurringMasterRepository from "./RecurringMasterRepository.js"

/** The recurring schedule: schema, validation, trigger instants. @since 0.1.0 */
export * as Schedule from "./Schedule.js"

/** The generated tour and its `tour-created` event. @since 0.1.0 */
export * as Tour from "./Tour.js"

/** The tour generator service. @since 0.1.0 */
export * as TourGenerator from "./TourGenerator.js"

/** The read port for generated tours (get, list in trigger order) and its in-memory layer. @since 0.1.0 */
export * as TourQuery from "./TourQuery.js"

/** The storage port for generated tours and its in-memory layer. @since 0.1.0 */
export * as TourRepository from "./TourRepository.js"

/** Vehicle classes and the `VehicleClassPolicy` port. @since 0.1.0 */
export * as VehicleClass from "./VehicleClass.js"

/** The one wall-clock resolver and calendar arithmetic in a time zone. @since 0.1.0 */
export * as WallClock from "./WallClock.js"
