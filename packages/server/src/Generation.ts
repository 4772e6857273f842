/**
 * Tour generation in the reference server (contract §2, §3): the generator over the PostgreSQL
 * ports, its loop, and activations with their first tours. Details: docs/internals.md (Generation).
 * @since 0.1.0
 */
import * as Availability from "@waybill/core/Availability"
import * as Activation from "@waybill/drafts/Activation"
import type { DraftService } from "@waybill/drafts/DraftService"
import { ReferenceData } from "@waybill/drafts/ReferenceData"
import * as TourGenerator from "@waybill/recurring/TourGenerator"
import * as VehicleClass from "@waybill/recurring/VehicleClass"
import * as PgRecurringMasterRepository from "@waybill/store-pg/PgRecurringMasterRepository"
import * as PgTourRepository from "@waybill/store-pg/PgTourRepository"
import type * as Clock from "effect/Clock"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** What a server may tune about generation. @since 0.1.0 */
export interface Options {
  /**
   * The clock of the whole server (tests move time forward with an `AdjustableClock`); the
   * system clock when omitted.
   */
  readonly clock?: Clock.Clock | undefined
  /** Generator tuning, e.g. `maxToursPerMaster` (the batch a master gets per run). */
  readonly generator?: TourGenerator.Options | undefined
}

/** The reference vehicle-class policy over the reference data's classes (contract §2). @since 0.1.0 */
export const layerVehicleClassPolicy: Layer.Layer<VehicleClass.VehicleClassPolicy, never, ReferenceData> = Layer.effect(
  VehicleClass.VehicleClassPolicy,
  Effect.map(ReferenceData, (data) => VehicleClass.makeReference(data.vehicleClasses))
)

/**
 * The generator. With a clock, every run reads that clock whoever calls it (a test fiber, the
 * loop, an HTTP request).
 * @since 0.1.0
 */
export const layerGenerator = (
  options: Options = {}
): Layer.Layer<TourGenerator.TourGenerator, never, TourGenerator.Requirements> =>
  Layer.effect(
    TourGenerator.TourGenerator,
    Effect.map(TourGenerator.make(options.generator), (generator) => {
      const clock = options.clock
      return clock === undefined
        ? generator
        : TourGenerator.TourGenerator.of({
            run: Effect.withClock(generator.run, clock),
            runMaster: (ref, runOptions) => Effect.withClock(generator.runMaster(ref, runOptions), clock)
          })
    })
  )

/**
 * Adds generation to a draft service: the PostgreSQL `RecurringMasterRepository` and
 * `TourRepository` ports (`TourQuery` too), the vehicle-class policy, the generator, and
 * `Activation.layer` over the draft service, so activations come with their first tours.
 * @since 0.1.0
 */
export const withTours = <E, R>(drafts: Layer.Layer<DraftService, E, R>, options: Options = {}) => {
  const generator = layerGenerator(options).pipe(
    Layer.provideMerge(
      Layer.mergeAll(PgRecurringMasterRepository.layer, PgTourRepository.layer, layerVehicleClassPolicy)
    )
  )
  return Activation.layer.pipe(Layer.provideMerge(generator), Layer.provide(drafts))
}

/**
 * The loop: a run at start-up (catching up after a restart), then one every `interval`. A run
 * that fails as a whole (the database is unreachable) is logged and the loop goes on.
 * @since 0.1.0
 */
export const layerLoop = (interval: Duration.DurationInput): Layer.Layer<never, never, TourGenerator.TourGenerator> =>
  Layer.scopedDiscard(
    Effect.flatMap(TourGenerator.TourGenerator, (generator) =>
      // An unreachable database is said once when met and once when gone, not once a run.
      Availability.forkRepeated(
        Effect.tap(generator.run, (summary) =>
          summary.toursCreated + summary.ended + summary.failed > 0
            ? Effect.logInfo("Tour generation run").pipe(Effect.annotateLogs({ ...summary }))
            : Effect.void
        ),
        { loop: "the tour generator", failure: "Tour generation run failed; retried next interval", interval }
      )
    )
  )
