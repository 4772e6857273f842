/**
 * The dispatcher as the dispatcher benchmarks run it: the in-memory ports, one HMAC webhook to a
 * loopback receiver in this process that answers 200 at once, the Node `WebhookSender`, and a
 * count of the deliveries the store records as succeeded. Shared by `dispatcher.bench.ts` (rates
 * against bare HTTP loops) and `dispatcher-workload.ts` (a fixed number of deliveries, whose
 * instructions `instructions.bench.ts` counts).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Transactor from "@waybill/core/Transactor"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import { EventOutbox } from "@waybill/events/EventOutbox"
import * as PropertyDefinition from "@waybill/events/PropertyDefinition"
import * as WebhookSender from "@waybill/sender/WebhookSender"
import * as DeliveryStore from "@waybill/webhooks/DeliveryStore"
import * as Dispatcher from "@waybill/webhooks/Dispatcher"
import * as FailureAlerts from "@waybill/webhooks/FailureAlerts"
import * as HostResolver from "@waybill/webhooks/HostResolver"
import * as MemoryDeliveryStore from "@waybill/webhooks/MemoryDeliveryStore"
import * as OutboxReader from "@waybill/webhooks/OutboxReader"
import * as SecretBox from "@waybill/webhooks/SecretBox"
import * as WebhookRepository from "@waybill/webhooks/WebhookRepository"
import * as WebhookService from "@waybill/webhooks/WebhookService"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schema from "effect/Schema"

/** The dispatcher's options that follow the clock. */
export type Timing = Pick<Dispatcher.Options, "pollIntervalMs" | "recordDelayMs">

/** Requests in flight to the receiver, for the dispatcher and the bare loops alike. */
export const IN_FLIGHT = 16

export const workspace = Schema.decodeSync(WorkspaceId)("bench")

/** When each event arrived at the receiver (`performance.now()`), by event id. */
export const arrivals = new Map<string, number>()

/** The receiver: answers 200 at once and notes when each event arrived. */
export const receiver = http.createServer((request, response) => {
  request.resume()
  request.on("end", () => {
    const eventId = request.headers["x-event-id"]
    if (typeof eventId === "string") arrivals.set(eventId, performance.now())
    response.writeHead(200, { "Content-Length": "0" }).end()
  })
})
receiver.keepAliveTimeout = 60_000
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
export const port = (receiver.address() as AddressInfo).port
export const url = `http://127.0.0.1:${port}/hook`

/** The payload of the `i`th event. */
export const tour = (i: number) => ({
  tour: { id: `tour_${i}`, status: "planned", substatus: null, properties: { prop_region: "opt_north" } }
})

// Successes as the store records them: fresh deliveries inserted with their result, and
// completions applied; a waiter is woken by the write that reaches its count, not by polling
// (a poll would spend instructions by the clock, not by the work).
let succeeded = 0
const waiters: Array<{ readonly count: number; readonly resolve: () => void }> = []
const counted = (added: number) => {
  succeeded += added
  for (let i = waiters.length - 1; i >= 0; i--) {
    if (succeeded >= waiters[i]!.count) waiters.splice(i, 1)[0]!.resolve()
  }
}

/** Deliveries recorded as succeeded so far. */
export const succeededSoFar = () => succeeded

/** Waits until `count` deliveries in all have been recorded as succeeded. */
export const untilSucceeded = (count: number): Effect.Effect<void> =>
  Effect.promise(() =>
    succeeded >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve }))
  )

const CountingStore = Layer.effect(
  DeliveryStore.DeliveryStore,
  Effect.sync(() => {
    const store = MemoryDeliveryStore.make()
    return DeliveryStore.DeliveryStore.of({
      ...store,
      insert: (deliveries) =>
        Effect.tap(store.insert(deliveries), () =>
          Effect.sync(() => counted(deliveries.filter((delivery) => delivery.outcome?.status === "succeeded").length))
        ),
      complete: (completions) =>
        Effect.tap(store.complete(completions), (applied) => Effect.sync(() => counted(applied.length)))
    })
  })
)

const layer = (timing: Timing) =>
  Layer.mergeAll(
    WebhookService.layer({ allowPrivateTargets: true }),
    Dispatcher.layer({ concurrency: 64, perWebhookConcurrency: IN_FLIGHT, ...timing })
  ).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        WebhookRepository.layerMemory,
        CountingStore,
        FailureAlerts.layerMemory,
        SecretBox.layerMemory,
        HostResolver.layerNone,
        PropertyDefinition.layerFixed([]),
        Transactor.layerMemory,
        OutboxReader.layerMemory,
        WebhookSender.layer({ allowPrivateTargets: true, maxSocketsPerHost: IN_FLIGHT })
      )
    ),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )

/**
 * The dispatcher with its webhook registered, running (Effect's tracer off, as the reference
 * server runs it without an OTLP endpoint; `BENCH_TRACER=on` turns it on). By default it polls
 * its outbox every 50 ms besides being woken by each round, and records fresh deliveries as the
 * server does (`Dispatcher.Options`).
 */
export const startDispatcher = async (timing: Timing = { pollIntervalMs: 50 }) => {
  const runtime = ManagedRuntime.make(layer(timing))
  const { outbox, dispatcher } = await runtime.runPromise(
    Effect.gen(function* () {
      const service = yield* WebhookService.WebhookService
      yield* service
        .register({ url, events: ["tour-created"], auth: { type: "hmac", secret: "bench-secret-0123456789" } })
        .pipe(Effect.provideService(CurrentWorkspace, { id: workspace, apiKeyId: "bench" }))
      return { outbox: yield* EventOutbox, dispatcher: yield* Dispatcher.Dispatcher }
    })
  )
  runtime.runFork(Effect.withTracerEnabled(dispatcher.run, process.env.BENCH_TRACER === "on"))
  // Events recorded at once, then fanned out, delivered and recorded.
  const deliver = (count: number) =>
    Effect.gen(function* () {
      const target = succeeded + count
      yield* outbox.publish(
        workspace,
        Array.from({ length: count }, (_, i) => ({ type: "tour-created" as const, payload: tour(i) }))
      )
      yield* dispatcher.wake
      yield* untilSucceeded(target)
    })
  const stop = async () => {
    await runtime.dispose()
    receiver.close()
    receiver.closeAllConnections()
  }
  return { runtime, outbox, dispatcher, deliver, stop }
}
