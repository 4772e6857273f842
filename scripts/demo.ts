/**
 * `npm run demo`: the whole flow in one command, on loopback, with nothing to install.
 *
 * 1. starts the reference server on an in-memory database and the example receiver (HMAC);
 * 2. registers an HMAC webhook for tour-created and tour-action-created, with a filter that lets
 *    through only tour-action-created events whose action is "advance";
 * 3. creates a recurring master and activates it: tours are generated at once;
 * 4. publishes two tour-action-created events through POST /events: "assign" (the filter skips
 *    it) and "advance" (the filter passes it);
 * 5. prints each delivery as it arrives (event type, delivery id, signature verified), then the
 *    generated tours, and exits.
 *
 * Everything goes through the typed client (`@waybill/http/Client`) over real HTTP.
 */
import { randomBytes } from "node:crypto"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as ReceiverConfig from "@waybill/example-receiver/Config"
import * as Receiver from "@waybill/example-receiver/Server"
import * as Client from "@waybill/http/Client"
import type { Tour } from "@waybill/recurring/Tour"
import { config } from "@waybill/server/Config"
import * as ReferenceDataFile from "@waybill/server/ReferenceDataFile"
import * as Server from "@waybill/server/Server"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"

const apiKey = `demo-${randomBytes(24).toString("base64url")}`
const hmacSecret = randomBytes(24).toString("hex")
const say = (line = "") => Effect.sync(() => console.log(line))

interface Arrived {
  readonly type: string
  readonly deliveryId: string
  readonly verifiedBy: string
  readonly eventId: string
  readonly action: string | undefined
}

const fieldOf = (value: unknown, ...path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>(
    (at, key) => (typeof at === "object" && at !== null ? (at as Record<string, unknown>)[key] : undefined),
    value
  )

const clock = (timeZone: string, seconds: number) =>
  new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(
    seconds * 1000
  )

const describeTour = (tour: Tour) => {
  const stops = tour.stops.map((stop) => {
    const city = fieldOf(stop.address, "city")
    const day = stop.dayOffset > 0 ? ` (+${stop.dayOffset}d)` : ""
    return `${typeof city === "string" ? city : "?"} ${clock(tour.timezone, stop.window.startsAt)}-${clock(tour.timezone, stop.window.endsAt)}${day}`
  })
  return `${tour.id}  ${tour.name ?? ""}  ${tour.triggerDate}  ${tour.vehicleClass} (${tour.vehicleClassReason})  ${stops.join(" -> ")}`
}

const program = Effect.gen(function* () {
  yield* say("Waybill demo: reference server + example receiver on 127.0.0.1, in-memory database")
  yield* say()

  // The example receiver verifies every delivery (here: HMAC with the webhook's secret) and
  // drops repeats by X-Delivery-Id before handing the event over.
  const arrived: Array<Arrived> = []
  const receiverConfig = Either.getOrThrowWith(
    ReceiverConfig.fromEnv({ PORT: "0", HOST: "127.0.0.1", RECEIVER_AUTH: "hmac", RECEIVER_SECRET: hmacSecret }),
    (message) => new Error(message)
  )
  const receiver = yield* Effect.acquireRelease(
    Effect.promise(() =>
      Receiver.start(receiverConfig, {
        log: () => {},
        onEvent: (event) => {
          const item: Arrived = {
            type: event.type,
            deliveryId: event.deliveryId,
            verifiedBy: event.verifiedBy,
            eventId: String(fieldOf(event.body, "id")),
            action: fieldOf(event.body, "payload", "action", "payload", "type") as string | undefined
          }
          arrived.push(item)
          console.log(
            `   <- ${item.type.padEnd(20)} ${item.deliveryId}  signature verified (${item.verifiedBy})${item.action === undefined ? "" : `  action=${item.action}`}`
          )
        }
      })
    ),
    (running) => Effect.promise(() => running.close())
  )

  // The reference server, configured as from the environment: in-memory database, one API key,
  // private targets allowed (the receiver listens on loopback over plain HTTP; development only).
  const settings = yield* config.pipe(
    Effect.withConfigProvider(
      ConfigProvider.fromMap(
        new Map([
          ["WAYBILL_DATA_DIR", "memory://"],
          ["WAYBILL_API_KEYS", `demo:${apiKey}`],
          ["WAYBILL_ALLOW_PRIVATE_TARGETS", "true"]
        ])
      )
    )
  )
  const referenceData = yield* ReferenceDataFile.load(settings.referenceDataPath)
  const context = yield* Layer.build(Server.layer({ ...settings, port: 0 }, referenceData))
  const baseUrl = yield* Effect.provide(Server.baseUrl, context)
  yield* say(`   server    ${baseUrl}  (workspace "demo", API key ${apiKey.slice(0, 9)}...)`)
  yield* say(`   receiver  ${receiver.url}  (HMAC, 5-minute replay window)`)
  yield* say()

  const waybill = yield* Client.make({ baseUrl, apiKey })

  const webhook = yield* waybill.webhooks.register({
    payload: {
      url: `${receiver.url}/hooks/waybill`,
      events: ["tour-created", "tour-action-created"],
      filters: {
        "tour-action-created": {
          match: "all",
          conditions: [{ field: "action.payload.type", operator: "equals", value: "advance" }]
        }
      },
      auth: { type: "hmac", secret: hmacSecret },
      description: "npm run demo"
    }
  })
  yield* say(`1. Registered webhook ${webhook.id} -> ${webhook.url}`)
  yield* say(`   events: ${webhook.events.join(", ")}; auth: ${JSON.stringify(webhook.auth)} (secrets are write-only)`)
  yield* say(`   filter on tour-action-created: action.payload.type equals "advance"`)
  yield* say()

  const master = yield* waybill.drafts.create({
    payload: {
      origin: "manual",
      status: "draft",
      name: "Line {{ weekday }}",
      transportShapeId: "shape_line",
      transport: {
        multiStopData: {
          stops: [
            {
              address: { city: "Hamburg", country: "DEU" },
              timeWindow: { from: "06:00", to: "08:00" },
              loads: [{ weightKg: 900 }]
            },
            { address: { city: "Berlin", country: "DEU" }, timeWindow: { from: "13:00", to: "15:00" }, dayOffset: 1 }
          ]
        },
        tour: { vehicleClass: "vc_12t" }
      },
      recurringSchedule: {
        cronExpressions: ["0 6 * * 1-5"],
        timezone: "Europe/Berlin",
        leadTimeDays: 7,
        vehicleClassAdjustmentStrategy: "recalculate"
      }
    }
  })
  yield* say(`2. Created recurring master ${master.id} "${master.name}" (weekdays 06:00 Europe/Berlin, 7 days ahead)`)
  const activated = yield* waybill.drafts.act({ path: { id: master.id }, payload: { type: "activate-recurring" } })
  const tours = (yield* waybill.tours.list({ urlParams: { draftId: master.id, limit: 100 } })).data
  yield* say(`   activated: status ${activated.transportDraft.status}; ${tours.length} tours generated`)
  yield* say()

  const tour = tours[0]!
  const publish = (type: string) =>
    Effect.flatMap(Effect.sync(Date.now), (now) =>
      waybill.webhooks.publish({
        payload: {
          type: "tour-action-created",
          payload: {
            tour: { id: tour.id, status: tour.status, substatus: tour.substatus, properties: tour.properties },
            action: {
              id: `act_demo_${type}`,
              payload: { type },
              createdAt: Math.floor(now / 1000),
              createdAtMilliseconds: now
            }
          }
        }
      })
    )
  const skipped = yield* publish("assign")
  yield* say(`3. Published ${skipped.id} tour-action-created, action "assign": the filter skips it`)
  const passed = yield* publish("advance")
  yield* say(`   Published ${passed.id} tour-action-created, action "advance": the filter passes it`)
  yield* say()

  yield* say("4. Deliveries as they arrive at the receiver:")
  const expected = tours.length + 1
  yield* Effect.sleep(Duration.millis(100)).pipe(
    Effect.repeat({ until: () => arrived.length >= expected }),
    Effect.timeoutFail({
      duration: Duration.seconds(60),
      onTimeout: () => new Error(`only ${arrived.length} of ${expected} deliveries arrived within 60 s`)
    })
  )
  // The skipped event has no delivery at all: no request, no retry, no alert.
  const log = yield* waybill.webhooks.deliveries({ path: { id: webhook.id }, urlParams: { limit: 100 } })
  const skippedDelivered =
    log.data.some((delivery) => delivery.eventId === skipped.id) || arrived.some((item) => item.eventId === skipped.id)
  if (skippedDelivered) return yield* Effect.fail(new Error(`${skipped.id} was delivered despite the filter`))
  yield* say(`   ${arrived.length} deliveries, all verified; ${skipped.id} ("assign") was skipped by the filter`)
  yield* say()

  yield* say("5. Generated tours (name from the template, class recalculated from 900 kg of loads):")
  for (const item of tours) yield* say(`   ${describeTour(item)}`)
  yield* say()
  yield* say("Done. Next: docs/quickstart.md, docs/embedding.md, docs/receiving-webhooks.md")
}).pipe(
  Effect.scoped,
  Effect.provide(FetchHttpClient.layer),
  // Keep the output to the story: the server's request log and info lines are left out.
  Logger.withMinimumLogLevel(LogLevel.Warning)
)

// Everything is closed when the program ends, so the process exits by itself.
Effect.runPromise(program).catch((error: unknown) => {
  console.error(`Demo failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
})
