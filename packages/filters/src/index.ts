/** @since 0.1.0 */

/** Calendar days anchored at Europe/Berlin: day bounds and date-field comparison. @since 0.1.0 */
export * as BerlinDay from "./BerlinDay.js"

/** Filter schema, validation against a field catalogue, compilation to a predicate. @since 0.1.0 */
export * as Filter from "./Filter.js"

/** Filter-field catalogue entries: field types and the operators they offer. @since 0.1.0 */
export * as FilterField from "./FilterField.js"
