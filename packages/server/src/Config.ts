/** The reference server's configuration, read from the environment (docs/operations.md). @since 0.1.0 */

import { join } from "node:path"
import { parseFrameAncestors } from "@waybill/console/Console"
import type { StaticKey } from "@waybill/core/ApiKeys"
import { WorkspaceId } from "@waybill/core/Workspace"
import type { DatabaseConfig } from "@waybill/store-pg/Database"
import * as Migrations from "@waybill/store-pg/Migrations"
import * as Retention from "@waybill/webhooks/Retention"
import { defaultMaxWebhooksPerWorkspace } from "@waybill/webhooks/WebhookService"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Either from "effect/Either"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Logs from "./Logs.js"
import { defaultPath } from "./ReferenceDataFile.js"

/** The reference server's settings; optional fields take their defaults when absent. @since 0.1.0 */
export interface ServerConfig {
  readonly port: number
  readonly host: string
  readonly database: DatabaseConfig
  /** The `DATABASE_URL` as given, for describing the target in logs without credentials. */
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  /** `None`: no keys configured; the server issues a development key on first start. */
  readonly apiKeys: Option.Option<ReadonlyArray<StaticKey>>
  readonly allowPrivateTargets: boolean
  /** 32 bytes as 64 hex characters; `None` means generate (embedded) or refuse (PostgreSQL). */
  readonly secretKey: Option.Option<Redacted.Redacted<string>>
  readonly retryDelayMs: number
  readonly deliveryTimeoutMs: number
  /** How long a claim holds without renewal (`WAYBILL_DELIVERY_LEASE_MS`); a crashed process's claims expire after it. */
  readonly deliveryLeaseMs?: number | undefined
  /** How long a stop awaits attempts in flight (`WAYBILL_SHUTDOWN_GRACE_MS`, default 10 000). */
  readonly shutdownGraceMs?: number | undefined
  /** How long events, deliveries and alerts are kept (`WAYBILL_RETENTION`, default 30 days; 0 keeps everything). */
  readonly retentionMs?: number | undefined
  readonly generatorIntervalMs: number
  readonly referenceDataPath: string
  /** Development only (`WAYBILL_CLOCK_START`): the clock starts at this instant (epoch ms). */
  readonly clockStart?: number | undefined
  /** The least severe level logged (`WAYBILL_LOG_LEVEL`), INFO when unset. */
  readonly logLevel?: LogLevel.LogLevel | undefined
  /** How log records are written (`WAYBILL_LOG_FORMAT`): `text` when unset, or `json`. */
  readonly logFormat?: Logs.Format | undefined
  /** How many webhooks a workspace may hold (`WAYBILL_MAX_WEBHOOKS_PER_WORKSPACE`). */
  readonly maxWebhooksPerWorkspace?: number | undefined
  /** The time a request's headers and body have to arrive in (`WAYBILL_REQUEST_TIMEOUT_MS`). */
  readonly requestTimeoutMs?: number | undefined
  /** Open connections accepted at once (`WAYBILL_MAX_CONNECTIONS`); one more is closed. */
  readonly maxConnections?: number | undefined
  /** Failed deliveries in a row that disable a webhook (`WAYBILL_DISABLE_AFTER_FAILURES`); 0: never. */
  readonly disableAfterFailures?: number | undefined
  /** The bearer token of `GET /metrics` (`WAYBILL_METRICS_TOKEN`); unset, no metrics. */
  readonly metricsToken?: Redacted.Redacted<string> | undefined
  /** Where spans go (the `OTEL_*` variables); unset, no tracer and no exporter. */
  readonly tracing?: TracingConfig | undefined
  /** The origins that may frame the console (`WAYBILL_CONSOLE_FRAME_ANCESTORS`); none when unset. */
  readonly consoleFrameAncestors?: ReadonlyArray<string> | undefined
}

/** The OTLP/HTTP trace exporter's settings, from the `OTEL_*` variables (docs/operations.md). @since 0.1.0 */
export interface TracingConfig {
  readonly endpoint: string
  readonly serviceName: string
  readonly protocol: "http/protobuf" | "http/json"
  /** `WAYBILL_TRACE_SQL`: a span per SQL statement and transaction too (default `false`). */
  readonly statements?: boolean | undefined
  /** `OTEL_TRACES_SAMPLER`: the SDK's sampler of that name; unset, `parentbased_always_on`. */
  readonly sampler?: TracingSampler | undefined
  /** `OTEL_TRACES_SAMPLER_ARG`: the ratio of the `traceidratio` samplers, 0 to 1 (default 1). */
  readonly samplerRatio?: number | undefined
  /** How spans are batched for export (the `OTEL_BSP_*` variables). */
  readonly batch?: TracingBatch | undefined
}

/**
 * The batch span processor's `OTEL_BSP_*` settings: past `maxQueueSize` waiting, new spans are dropped.
 * @since 0.1.0
 */
export interface TracingBatch {
  readonly scheduledDelayMillis: number
  readonly maxQueueSize: number
  readonly maxExportBatchSize: number
}

/** The batch span processor's defaults, used when the `OTEL_BSP_*` variables are unset. @since 0.1.0 */
export const defaultTracingBatch: TracingBatch = {
  scheduledDelayMillis: 5_000,
  maxQueueSize: 2_048,
  maxExportBatchSize: 512
}

const samplers = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio"
] as const

/** The samplers `OTEL_TRACES_SAMPLER` may name: the OpenTelemetry specification's standard ones. @since 0.1.0 */
export type TracingSampler = (typeof samplers)[number]

/** The request deadline when `WAYBILL_REQUEST_TIMEOUT_MS` is unset. @since 0.1.0 */
export const defaultRequestTimeoutMs = 30_000

/** The connection cap when `WAYBILL_MAX_CONNECTIONS` is unset (docs/operations.md says why). @since 0.1.0 */
export const defaultMaxConnections = 1_000

const decodeWorkspace = Schema.decodeUnknownEither(WorkspaceId)

/** Parses `WAYBILL_API_KEYS`: comma-separated `workspaceId:key` pairs. @since 0.1.0 */
export const parseApiKeys = (value: string): Either.Either<ReadonlyArray<StaticKey>, string> => {
  const entries = value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
  if (entries.length === 0) return Either.left("lists no key")
  const keys: Array<StaticKey> = []
  for (const [index, entry] of entries.entries()) {
    const colon = entry.indexOf(":")
    const workspace = colon < 0 ? Either.left(undefined) : decodeWorkspace(entry.slice(0, colon))
    const key = entry.slice(colon + 1)
    // Never echo the entry: it holds a key.
    if (colon <= 0 || Either.isLeft(workspace)) {
      return Either.left(`entry ${index + 1} must be workspaceId:key with a workspace id of letters, digits, _ . -`)
    }
    if (key.length < 8) return Either.left(`entry ${index + 1} has a key shorter than 8 characters`)
    keys.push({ workspaceId: workspace.right, key: Redacted.make(key) })
  }
  return Either.right(keys)
}

// Names the variable in the error, which a bare `Config.validate` does not.
const checked = <A>(name: string, config: Config.Config<A>, message: string, valid: (value: A) => boolean) =>
  Config.mapOrFail(config, (value) =>
    valid(value) ? Either.right(value) : Either.left(ConfigError.InvalidData([name], message))
  )

// The levels `WAYBILL_LOG_LEVEL` takes, as docs/operations.md lists them (any case).
const logLevelNames = ["trace", "debug", "info", "warn", "error", "fatal", "off"]

const positiveInt = (name: string, fallback: number) =>
  checked(name, Config.integer(name).pipe(Config.withDefault(fallback)), "must be a positive integer", (n) => n > 0)

// A URL the pg driver would read; never echoed, as it may hold a password.
const isPostgresUrl = (value: string) => {
  try {
    const url = new URL(value)
    return (url.protocol === "postgres:" || url.protocol === "postgresql:") && url.hostname !== ""
  } catch {
    return false
  }
}

const otlpEndpoint = checked(
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  Config.string("OTEL_EXPORTER_OTLP_ENDPOINT"),
  "must be an http:// or https:// URL",
  (value) => {
    try {
      const url = new URL(value)
      return url.protocol === "http:" || url.protocol === "https:"
    } catch {
      return false
    }
  }
)

const tracingConfig: Config.Config<TracingConfig | undefined> = Config.all({
  endpoint: Config.option(otlpEndpoint),
  serviceName: Config.string("OTEL_SERVICE_NAME").pipe(Config.withDefault("waybill")),
  protocol: Config.literal(
    "http/protobuf",
    "http/json"
  )("OTEL_EXPORTER_OTLP_PROTOCOL").pipe(Config.withDefault("http/protobuf" as const)),
  statements: Config.boolean("WAYBILL_TRACE_SQL").pipe(Config.withDefault(false)),
  sampler: Config.option(Config.literal(...samplers)("OTEL_TRACES_SAMPLER")).pipe(Config.map(Option.getOrUndefined)),
  samplerRatio: checked(
    "OTEL_TRACES_SAMPLER_ARG",
    Config.option(Config.number("OTEL_TRACES_SAMPLER_ARG")),
    "must be a number from 0 to 1",
    Option.match({ onNone: () => true, onSome: (ratio) => ratio >= 0 && ratio <= 1 })
  ).pipe(Config.map(Option.getOrUndefined)),
  batch: Config.all({
    scheduledDelayMillis: positiveInt("OTEL_BSP_SCHEDULE_DELAY", defaultTracingBatch.scheduledDelayMillis),
    maxQueueSize: positiveInt("OTEL_BSP_MAX_QUEUE_SIZE", defaultTracingBatch.maxQueueSize),
    maxExportBatchSize: positiveInt("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", defaultTracingBatch.maxExportBatchSize)
  }).pipe((batch) =>
    checked(
      "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
      batch,
      "must not be larger than OTEL_BSP_MAX_QUEUE_SIZE",
      ({ maxExportBatchSize, maxQueueSize }) => maxExportBatchSize <= maxQueueSize
    )
  )
}).pipe(
  Config.map(({ endpoint, ...rest }) =>
    Option.isNone(endpoint) ? undefined : { endpoint: endpoint.value.replace(/\/+$/, ""), ...rest }
  )
)

/** `WAYBILL_LOG_FORMAT`: `text` (default) or `json`; `main.ts` reads it first, for every record. @since 0.3.0 */
export const logFormat: Config.Config<Logs.Format> = Config.literal(
  "text",
  "json"
)("WAYBILL_LOG_FORMAT").pipe(Config.withDefault("text" as const))

/** The configuration's errors, one line each, naming the variable; values are never quoted back. @since 0.1.0 */
export const describeError = (error: ConfigError.ConfigError): ReadonlyArray<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...new Set([...describeError(error.left), ...describeError(error.right)])]
    case "MissingData":
    case "InvalidData":
    case "SourceUnavailable":
    case "Unsupported":
      return [`${error.path.length === 0 ? "configuration" : error.path.join("_")}: ${error.message}`]
  }
}

/** Every setting, each checked on its own: what the keys tool reads, which needs no secret key. @since 0.1.0 */
export const settings: Config.Config<ServerConfig> = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(3000)),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  databaseUrl: Config.option(
    checked(
      "DATABASE_URL",
      Config.redacted("DATABASE_URL"),
      "must be a PostgreSQL URL such as postgres://user:password@host:5432/database",
      (url) => isPostgresUrl(Redacted.value(url))
    )
  ),
  dataDir: Config.string("WAYBILL_DATA_DIR").pipe(Config.withDefault(".waybill/data")),
  schema: Config.string("WAYBILL_DATABASE_SCHEMA").pipe(
    Config.withDefault(Migrations.defaultSchema),
    Config.mapOrFail((name) =>
      Option.match(Migrations.schemaProblem(name), {
        onNone: () => Either.right(name),
        onSome: (problem) => Either.left(ConfigError.InvalidData(["WAYBILL_DATABASE_SCHEMA"], problem))
      })
    )
  ),
  apiKeys: Config.option(Config.string("WAYBILL_API_KEYS")).pipe(
    Config.mapOrFail(
      Option.match({
        onNone: () => Either.right(Option.none<ReadonlyArray<StaticKey>>()),
        onSome: (value) =>
          Either.mapBoth(parseApiKeys(value), {
            onLeft: (message) => ConfigError.InvalidData(["WAYBILL_API_KEYS"], message),
            onRight: Option.some
          })
      })
    )
  ),
  allowPrivateTargets: Config.boolean("WAYBILL_ALLOW_PRIVATE_TARGETS").pipe(Config.withDefault(false)),
  secretKey: Config.option(
    checked(
      "WAYBILL_SECRET_KEY",
      Config.redacted("WAYBILL_SECRET_KEY"),
      "must be 32 bytes as 64 hexadecimal characters (generate one with: openssl rand -hex 32)",
      (key) => /^[0-9a-fA-F]{64}$/.test(Redacted.value(key))
    )
  ),
  retryDelayMs: positiveInt("WAYBILL_RETRY_DELAY_MS", 10_000),
  deliveryTimeoutMs: positiveInt("WAYBILL_DELIVERY_TIMEOUT_MS", 20_000),
  deliveryLeaseMs: checked(
    "WAYBILL_DELIVERY_LEASE_MS",
    Config.option(Config.integer("WAYBILL_DELIVERY_LEASE_MS")),
    // Renewed every third of it: a shorter one would be renewed more often than a claim is made.
    "must be an integer of at least 3000 (milliseconds; default 6000)",
    (lease) => Option.isNone(lease) || lease.value >= 3_000
  ).pipe(Config.map(Option.getOrUndefined)),
  shutdownGraceMs: checked(
    "WAYBILL_SHUTDOWN_GRACE_MS",
    Config.integer("WAYBILL_SHUTDOWN_GRACE_MS").pipe(Config.withDefault(10_000)),
    "must be a non-negative integer (milliseconds; 0 abandons attempts in flight at once)",
    (n) => n >= 0
  ),
  retentionMs: Config.string("WAYBILL_RETENTION").pipe(
    Config.withDefault("30d"),
    Config.mapOrFail((text) =>
      Either.mapLeft(Retention.parse(text), (reason) => ConfigError.InvalidData(["WAYBILL_RETENTION"], reason))
    )
  ),
  generatorIntervalMs: positiveInt("WAYBILL_GENERATOR_INTERVAL_MS", 60_000),
  maxWebhooksPerWorkspace: positiveInt("WAYBILL_MAX_WEBHOOKS_PER_WORKSPACE", defaultMaxWebhooksPerWorkspace),
  requestTimeoutMs: positiveInt("WAYBILL_REQUEST_TIMEOUT_MS", defaultRequestTimeoutMs),
  maxConnections: positiveInt("WAYBILL_MAX_CONNECTIONS", defaultMaxConnections),
  disableAfterFailures: checked(
    "WAYBILL_DISABLE_AFTER_FAILURES",
    Config.integer("WAYBILL_DISABLE_AFTER_FAILURES").pipe(Config.withDefault(0)),
    "must be a non-negative integer (0: never disable automatically)",
    (n) => n >= 0
  ),
  referenceDataPath: Config.string("WAYBILL_REFERENCE_DATA").pipe(Config.withDefault(defaultPath)),
  clockStart: Config.option(
    Config.string("WAYBILL_CLOCK_START").pipe(
      Config.mapOrFail((value) => {
        const millis = /(Z|[+-]\d{2}:\d{2})$/.test(value) ? Date.parse(value) : Number.NaN
        return Number.isNaN(millis)
          ? Either.left(
              ConfigError.InvalidData(
                ["WAYBILL_CLOCK_START"],
                "must be an ISO 8601 instant with Z or an offset, e.g. 2026-12-31T12:00:00Z"
              )
            )
          : Either.right(millis)
      })
    )
  ).pipe(Config.map(Option.getOrUndefined)),
  logLevel: checked(
    "WAYBILL_LOG_LEVEL",
    Config.option(Config.string("WAYBILL_LOG_LEVEL")),
    `must be one of ${logLevelNames.join(", ")}`,
    (name) => Option.isNone(name) || logLevelNames.includes(name.value.toLowerCase())
  ).pipe(
    Config.map((name) =>
      Option.isNone(name)
        ? undefined
        : LogLevel.allLevels.find((level) => level.label.toLowerCase() === name.value.toLowerCase())
    )
  ),
  logFormat,
  metricsToken: Config.option(
    checked(
      "WAYBILL_METRICS_TOKEN",
      Config.redacted("WAYBILL_METRICS_TOKEN"),
      "must be 16 to 255 visible ASCII characters",
      (token) => /^[\x21-\x7e]{16,255}$/.test(Redacted.value(token))
    )
  ).pipe(Config.map(Option.getOrUndefined)),
  tracing: tracingConfig,
  consoleFrameAncestors: Config.string("WAYBILL_CONSOLE_FRAME_ANCESTORS").pipe(
    Config.withDefault(""),
    Config.mapOrFail((value) => {
      const parsed = parseFrameAncestors(value)
      return "error" in parsed
        ? Either.left(ConfigError.InvalidData(["WAYBILL_CONSOLE_FRAME_ANCESTORS"], parsed.error))
        : Either.right(parsed.origins)
    })
  )
}).pipe(
  Config.map(
    ({ dataDir, schema, ...rest }): ServerConfig => ({
      ...rest,
      database: Option.match(rest.databaseUrl, {
        onNone: (): DatabaseConfig => ({ _tag: "Embedded", dataDir, schema }),
        onSome: (url): DatabaseConfig => ({ _tag: "Postgres", url, schema })
      })
    })
  )
)

/**
 * `settings`, and a secret key wherever `DATABASE_URL` is set: checked with the rest, so that
 * nothing is touched before refusing.
 * @since 0.1.0
 */
export const config: Config.Config<ServerConfig> = Config.zipWith(
  settings,
  // Read beside `settings`, not after them, so that every bad or missing variable is reported at once.
  Config.all({
    databaseUrl: Config.option(Config.string("DATABASE_URL")),
    secretKey: Config.option(Config.string("WAYBILL_SECRET_KEY"))
  }).pipe(
    Config.mapOrFail(({ databaseUrl, secretKey }) =>
      Option.isSome(databaseUrl) && Option.isNone(secretKey)
        ? Either.left(
            ConfigError.InvalidData(
              ["WAYBILL_SECRET_KEY"],
              "is required with DATABASE_URL: every process sharing the database must encrypt webhook secrets with the same key (generate one with: openssl rand -hex 32)"
            )
          )
        : Either.right(undefined)
    )
  ),
  (server) => server
)

/** Where the embedded database keeps its files inside the data directory. @since 0.1.0 */
export const databaseConfig = (server: ServerConfig): DatabaseConfig =>
  server.database._tag === "Embedded" && server.database.dataDir !== "memory://"
    ? { ...server.database, dataDir: join(server.database.dataDir, "pglite") }
    : server.database
