import { assert } from "@effect/vitest"
import * as Transactor from "@waybill/core/Transactor"
import { CurrentWorkspace, WorkspaceId } from "@waybill/core/Workspace"
import * as EventIntake from "@waybill/events/EventIntake"
import type { EventType } from "@waybill/events/EventType"
import * as PropertyDefinition from "@waybill/events/PropertyDefinition"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Schema from "effect/Schema"
import { DeliveryStore } from "../src/DeliveryStore.js"
import * as Dispatcher from "../src/Dispatcher.js"
import * as FailureAlerts from "../src/FailureAlerts.js"
import * as HostResolver from "../src/HostResolver.js"
import * as HttpSender from "../src/HttpSender.js"
import * as MemoryDeliveryStore from "../src/MemoryDeliveryStore.js"
import * as OutboxReader from "../src/OutboxReader.js"
import * as SecretBox from "../src/SecretBox.js"
import * as WebhookRepository from "../src/WebhookRepository.js"
import * as WebhookService from "../src/WebhookService.js"

export const wsA = Schema.decodeSync(WorkspaceId)("wsp_a")
export const wsB = Schema.decodeSync(WorkspaceId)("wsp_b")

/** 2026-12-23T…Z, a plausible "now" (epoch milliseconds). */
export const NOW = 1_798_000_000_000

export const definitions: ReadonlyArray<PropertyDefinition.PropertyDefinition> = [
  {
    entity: "tour",
    id: "prop_region",
    type: "select",
    name: "Region",
    options: [
      { id: "opt_north", label: "North" },
      { id: "opt_south", label: "South" }
    ]
  },
  { entity: "tour", id: "prop_note", type: "text", name: "Note" },
  { entity: "tour", id: "prop_due", type: "date", name: "Due" },
  { entity: "tour", id: "prop_weight", type: "number", name: "Weight" },
  { entity: "tour", id: "prop_tags", type: "tags", name: "Tags" }
]

/** Secrets used by the suites; `scan` looks for each of them. */
export const secrets = {
  hmac: "hmac-secret-0123456789-ABCDEF",
  password: "pa55-w0rd-basic-Σ",
  token: "bearer-token-XYZ-987654321"
} as const

export const hmacAuth = { type: "hmac", secret: secrets.hmac } as const
export const basicAuth = { type: "basic", username: "ops", password: secrets.password } as const
export const bearerAuth = { type: "bearer", token: secrets.token } as const

export const tour = (properties: Record<string, unknown> = {}, status = "planned") => ({
  id: "tour_1",
  status,
  substatus: null,
  properties
})

/** The in-memory ports, the service and the dispatcher, with a scripted receiver. */
export const makeLayer = (options: {
  readonly respond: (
    request: HttpSender.SendRequest,
    index: number
  ) => Effect.Effect<HttpSender.SendResponse, HttpSender.SendError>
  readonly dispatcher?: Dispatcher.Options
  readonly allowPrivateTargets?: boolean
  readonly replayStepSize?: number
  readonly maxWebhooksPerWorkspace?: number
  readonly concurrentStatsReads?: number | undefined
  readonly resolver?: Readonly<Record<string, ReadonlyArray<string>>>
  /** The in-memory delivery store as the service sees it (a test's own wrapper). */
  readonly deliveryStore?: (store: DeliveryStore["Type"]) => DeliveryStore["Type"]
}) => {
  const wrap = options.deliveryStore
  const ports = Layer.mergeAll(
    WebhookRepository.layerMemory,
    wrap === undefined
      ? MemoryDeliveryStore.layer
      : Layer.effect(DeliveryStore, Effect.map(DeliveryStore, wrap)).pipe(Layer.provide(MemoryDeliveryStore.layer)),
    FailureAlerts.layerMemory,
    SecretBox.layerMemory,
    HostResolver.layerStatic(options.resolver ?? { "hooks.example.org": ["93.184.215.14"] }),
    PropertyDefinition.layerFixed(definitions),
    Transactor.layerMemory,
    OutboxReader.layerMemory,
    HttpSender.layerScripted(options.respond)
  )
  return Layer.mergeAll(
    WebhookService.layer({
      allowPrivateTargets: options.allowPrivateTargets ?? false,
      replayStepSize: options.replayStepSize,
      maxWebhooksPerWorkspace: options.maxWebhooksPerWorkspace,
      concurrentStatsReads: options.concurrentStatsReads
    }),
    // Tests stop `run` with attempts that never answer, on a test clock: no grace unless asked.
    Dispatcher.layer({ shutdownGraceMs: 0, ...options.dispatcher })
  ).pipe(Layer.provideMerge(ports))
}

export const ok = (statusCode = 200) => Effect.succeed({ statusCode })

export const inWorkspace =
  (workspaceId: WorkspaceId) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, CurrentWorkspace>> =>
    Effect.provideService(self, CurrentWorkspace, { id: workspaceId, apiKeyId: `key_${workspaceId}` })

export const register = (input: unknown, workspaceId: WorkspaceId = wsA) =>
  Effect.flatMap(WebhookService.WebhookService, (service) => service.register(input)).pipe(inWorkspace(workspaceId))

export const publish = (type: EventType, payload: unknown, workspaceId: WorkspaceId = wsA) =>
  EventIntake.publish({ type, payload }).pipe(inWorkspace(workspaceId))

/** Fans out every recorded event, then attempts every due delivery. */
export const settle = Effect.flatMap(Dispatcher.Dispatcher, (d) => Effect.zipRight(d.fanOutAll, d.deliverDue))

/** Lets the fibers run (the clock does not move) until `check` holds; fails the test after 500 turns. */
export const eventually = <E, R>(check: Effect.Effect<boolean, E, R>, what: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 500; i++) {
      if (yield* check) return
      yield* Effect.yieldNow()
    }
    assert.fail(`never happened: ${what}`)
  })

/** The requests the scripted sender received, in order. */
export const requests = Effect.flatMap(HttpSender.SentRequests, (sent) => sent.all)

/** A webhook's delivery log, newest first. */
export const deliveriesOf = (webhookId: string, workspaceId: WorkspaceId = wsA) =>
  Effect.flatMap(WebhookService.WebhookService, (service) => service.deliveries(webhookId, { limit: 100 })).pipe(
    inWorkspace(workspaceId),
    Effect.map((page) => page.data)
  )

export const registration = (overrides: Record<string, unknown> = {}) => ({
  url: "https://hooks.example.org/waybill",
  events: ["tour-created"],
  auth: hmacAuth,
  ...overrides
})

/** Every log line (logfmt, all levels, annotations and causes included). */
export class LogLines extends Context.Tag("test/LogLines")<LogLines, Array<string>>() {}

export const captureLogs = Layer.unwrapEffect(
  Effect.sync(() => {
    const lines: Array<string> = []
    const logger = Logger.map(Logger.logfmtLogger, (line) => {
      lines.push(line)
    })
    return Layer.mergeAll(
      Logger.replace(Logger.defaultLogger, logger),
      Logger.minimumLogLevel(LogLevel.All),
      Layer.succeed(LogLines, lines)
    )
  })
)

/** Everything a value shows when printed, serialised or logged. */
export const renderings = (value: unknown): Array<string> => {
  const out: Array<string> = []
  try {
    out.push(JSON.stringify(value) ?? "")
  } catch {
    // Circular values have other renderings below.
  }
  out.push(String(value))
  if (value instanceof Error) out.push(value.message, value.stack ?? "")
  return out
}

/** The secrets of `secrets` found in any of the texts. */
export const leakedSecrets = (texts: ReadonlyArray<string>): Array<string> =>
  Object.values(secrets).filter((secret) => texts.some((text) => text.includes(secret)))
