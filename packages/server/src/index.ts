/**
 * The reference server as a library: configuration, reference-data file, layers.
 * @since 0.1.0
 */
export * as AdjustableClock from "./AdjustableClock.js"
export * as Config from "./Config.js"
export * as Generation from "./Generation.js"
export * as Observability from "./Observability.js"
export * as ReferenceDataFile from "./ReferenceDataFile.js"
export * as SecretKey from "./SecretKey.js"
export * as Server from "./Server.js"
export * as Startup from "./Startup.js"
export * as Sweeps from "./Sweeps.js"
export * as Waybill from "./Waybill.js"
