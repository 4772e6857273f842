/**
 * What an in-memory adapter has recorded, read back in order: the shape of the readers of the in-memory
 * layers (`EventOutbox.MemoryEventLog`, `TourRepository.MemoryTours`, `HttpSender.SentRequests`).
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"

/** Everything recorded so far, oldest first, as it stands when `all` runs. @since 0.1.0 */
export interface Recorded<A> {
  readonly all: Effect.Effect<ReadonlyArray<A>>
}
