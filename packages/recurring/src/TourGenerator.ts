/**
 * The tour generator (contract §3): for every active master, every due tour from its cursor to its
 * horizon, stored once and announced once, one transaction per master. Details: docs/internals.md
 * (TourGenerator).
 * @since 0.1.0
 */
import * as Id from "@waybill/core/Id"
import * as Metrics from "@waybill/core/Metrics"
import * as Transactor from "@waybill/core/Transactor"
import { EventOutbox } from "@waybill/events/EventOutbox"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Occurrence from "./Occurrence.js"
import type { MasterRef, MasterState } from "./RecurringMasterRepository.js"
import { RecurringMasterRepository, refOf } from "./RecurringMasterRepository.js"
import * as Tour from "./Tour.js"
import { TourRepository } from "./TourRepository.js"
import type { VehicleClassPolicy } from "./VehicleClass.js"

/** Totals of one run over every master. @since 0.1.0 */
export interface RunSummary {
  readonly masters: number
  readonly toursCreated: number
  readonly skipped: number
  readonly ended: number
  readonly failed: number
}

/**
 * What happened to one master in a run.
 *
 * - `skipped`: locked by another process, or no longer active or paused;
 * - `idle`: paused, or nothing new was due (the cursor may still have moved);
 * - `generated`: tours were stored (`created` lists the new ones);
 * - `ended`: the window has passed and the master was ended (after any last tours);
 * - `failed`: the master's transaction failed and was rolled back (logged; retried next run).
 * @since 0.1.0
 */
export interface MasterOutcome {
  readonly ref: MasterRef
  readonly status: "skipped" | "idle" | "generated" | "ended" | "failed"
  readonly created: ReadonlyArray<Tour.Tour>
}

/** @since 0.1.0 */
export class TourGenerator extends Context.Tag("@waybill/recurring/TourGenerator")<
  TourGenerator,
  {
    /** One pass over every master the `RecurringMasterRepository` port lists. */
    readonly run: Effect.Effect<RunSummary>
    /**
     * One master right away, in a transaction of its own; a failure is logged and reported as
     * `failed` (the loop retries it). With `joinTransaction`, in the caller's open transaction,
     * which a failure fails (a master's first tours: `Activation` of `@waybill/drafts`).
     */
    readonly runMaster: (
      ref: MasterRef,
      options?: { readonly joinTransaction?: boolean }
    ) => Effect.Effect<MasterOutcome>
  }
>() {}

/** Tuning of a generator. @since 0.1.0 */
export interface Options {
  /**
   * At most this many tours per master and run (default 1000): a minutely schedule with a
   * long lead time is generated over several runs instead of in one huge transaction.
   */
  readonly maxToursPerMaster?: number
  /** Masters processed at once in a run (default 1); each has its own transaction. */
  readonly concurrency?: number
}

/** Everything a generator needs besides `Clock`. @since 0.1.0 */
export type Requirements =
  | RecurringMasterRepository
  | TourRepository
  | EventOutbox
  | Transactor.Transactor
  | VehicleClassPolicy

/** Builds a generator over the ports in context. @since 0.1.0 */
export const make = (options?: Options): Effect.Effect<TourGenerator["Type"], never, Requirements> =>
  Effect.gen(function* () {
    const context = yield* Effect.context<Requirements>()
    const masters = Context.get(context, RecurringMasterRepository)
    const repository = Context.get(context, TourRepository)
    const outbox = Context.get(context, EventOutbox)
    const transactor = Context.get(context, Transactor.Transactor)
    const limit = Math.max(1, options?.maxToursPerMaster ?? 1000)

    const processClaimed = (ref: MasterRef) =>
      Effect.gen(function* () {
        const claimed = yield* masters.claim(ref)
        if (Option.isNone(claimed)) return { ref, status: "skipped", created: [] } satisfies MasterOutcome
        const { activeSince, cursor, master, status } = claimed.value
        const schedule = master.schedule
        const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const ended = schedule.endsAt !== undefined && now >= schedule.endsAt
        let created: ReadonlyArray<Tour.Tour> = []
        let complete = true
        if (status === "active") {
          const until = Occurrence.horizon(now, schedule.leadTimeDays, schedule.timezone)
          const from = Math.max(cursor ?? activeSince, activeSince)
          let next = until
          if (from < until) {
            const due = yield* Occurrence.expand(master, from, until, { limit })
            if (due.length === limit) {
              // Possibly more: continue after the last one next run.
              next = due[due.length - 1]!.triggerAt + 1
              complete = next >= until
            }
            if (due.length > 0) {
              const tours = yield* Effect.forEach(due, (occurrence) =>
                Effect.map(Id.make("tour"), (id) => Tour.make(master, occurrence, { id, createdAt: now }))
              )
              created = yield* repository.insertIfAbsent(ref, tours)
              if (created.length > 0) {
                yield* outbox.publish(master.workspaceId, created.map(Tour.created))
                yield* Effect.sync(() => Metrics.recordTours(created.length))
              }
            }
          }
          if (cursor === null || next > cursor) yield* masters.advance(ref, next)
        }
        if (ended && complete) {
          yield* masters.end(ref, now)
          return { ref, status: "ended", created } satisfies MasterOutcome
        }
        return { ref, status: created.length > 0 ? "generated" : "idle", created } satisfies MasterOutcome
      })

    const processOne = (ref: MasterRef) =>
      transactor
        .withTransaction(processClaimed(ref))
        .pipe(
          Effect.catchAllCause((cause) =>
            Effect.as(
              Effect.logWarning("Tour generation failed for a recurring master; it is retried next run").pipe(
                Effect.annotateLogs({ workspaceId: ref.workspaceId, draftId: ref.id, cause: Cause.pretty(cause) })
              ),
              { ref, status: "failed", created: [] } satisfies MasterOutcome
            )
          )
        )

    // The context is provided once per call, not once per master: providing costs microseconds.
    const runMaster = (ref: MasterRef, runOptions?: { readonly joinTransaction?: boolean }) =>
      Effect.provide(runOptions?.joinTransaction ? processClaimed(ref) : processOne(ref), context)

    // From the listed (maybe stale) state: an active master with nothing due before its horizon
    // and its window open needs no transaction this run (safe: cursor and activeSince only grow).
    const nothingDue = (state: MasterState, now: number): boolean => {
      const { activeSince, cursor, master, status } = state
      const schedule = master.schedule
      if (status !== "active" || (schedule.endsAt !== undefined && now >= schedule.endsAt)) return false
      try {
        const from = Math.max(cursor ?? activeSince, activeSince)
        const until = Occurrence.horizon(now, schedule.leadTimeDays, schedule.timezone)
        return Occurrence.triggerInstants(master, from, until, 1).length === 0
      } catch {
        // Data that does not expand (written around validation): let the transaction fail and log it.
        return false
      }
    }

    const run: Effect.Effect<RunSummary> = Effect.gen(function* () {
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const listed = yield* masters.list(now)
      const outcomes = yield* Effect.forEach(
        listed,
        (entry) => {
          const ref = refOf(entry)
          return "master" in entry && nothingDue(entry, now)
            ? Effect.succeed<MasterOutcome>({ ref, status: "idle", created: [] })
            : processOne(ref)
        },
        { concurrency: options?.concurrency ?? 1 }
      )
      const count = (status: MasterOutcome["status"]) => outcomes.filter((o) => o.status === status).length
      return {
        masters: outcomes.length,
        toursCreated: outcomes.reduce((sum, o) => sum + o.created.length, 0),
        skipped: count("skipped"),
        ended: count("ended"),
        failed: count("failed")
      }
    }).pipe(Effect.provide(context))

    return TourGenerator.of({ run, runMaster })
  })

/** The generator as a layer over the ports. @since 0.1.0 */
export const layer = (options?: Options): Layer.Layer<TourGenerator, never, Requirements> =>
  Layer.effect(TourGenerator, make(options))

/**
 * Runs the generator every `interval` (the reference server: `WAYBILL_GENERATOR_INTERVAL_MS`),
 * forever; fork it in a scope.
 * @since 0.1.0
 */
export const runEvery = (interval: Duration.DurationInput): Effect.Effect<never, never, TourGenerator> =>
  Effect.flatMap(TourGenerator, (generator) =>
    generator.run.pipe(
      Effect.repeat(Schedule.spaced(interval)),
      Effect.flatMap(() => Effect.never)
    )
  )
