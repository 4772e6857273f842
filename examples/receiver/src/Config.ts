/**
 * The example receiver's settings, read from the environment.
 *
 * | variable | default | meaning |
 * |---|---|---|
 * | `PORT` | `3001` | port to listen on (`0`: any free port) |
 * | `HOST` | `127.0.0.1` | address to listen on |
 * | `RECEIVER_AUTH` | `hmac` | `hmac`, `basic` or `bearer`: how the webhook was registered |
 * | `RECEIVER_SECRET` | | the HMAC secret (`hmac`; `whsec_…` for `standard-webhooks`) |
 * | `RECEIVER_PREVIOUS_SECRET` | | during a rotation: the secret being replaced, also accepted |
 * | `RECEIVER_SIGNATURE_SCHEME` | `waybill` | `waybill` or `standard-webhooks`: the HMAC webhook's `scheme` |
 * | `RECEIVER_USERNAME`, `RECEIVER_PASSWORD` | | the Basic credentials (`basic`) |
 * | `RECEIVER_PREVIOUS_PASSWORD` | | during a rotation: the password being replaced, also accepted |
 * | `RECEIVER_TOKEN` | | the Bearer token (`bearer`) |
 * | `RECEIVER_PREVIOUS_TOKEN` | | during a rotation: the token being replaced, also accepted |
 * | `RECEIVER_TOLERANCE_SECONDS` | `300` | HMAC replay window, both directions |
 * | `RECEIVER_MAX_BODY_BYTES` | `5242880` | larger bodies are refused with 413 |
 * | `RECEIVER_DEDUP_CAPACITY` | `10000` | how many delivery ids are remembered |
 *
 * @since 0.1.0
 */
import type { Receiver } from "@waybill/signing"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

/**
 * @since 0.1.0
 * @category models
 */
export interface ReceiverConfig {
  readonly host: string
  readonly port: number
  readonly credentials: Receiver.Credentials
  readonly toleranceSeconds: number
  readonly maxBodyBytes: number
  readonly dedupCapacity: number
}

// Config.validate drops the variable's name from its error; mapOrFail keeps it.
const nonEmpty = (name: string) =>
  Config.redacted(name).pipe(
    Config.mapOrFail((value) =>
      Redacted.value(value).length > 0
        ? Either.right(value)
        : Either.left(ConfigError.InvalidData([name], "must not be empty"))
    )
  )

// The current secret, and the one being replaced while a rotation runs (optional): a delivery
// made with either passes.
const withPrevious = (current: string, previous: string) =>
  Config.map(
    Config.all({ current: nonEmpty(current), previous: Config.option(nonEmpty(previous)) }),
    ({ current, previous }): Redacted.Redacted<string> | ReadonlyArray<Redacted.Redacted<string>> =>
      Option.isSome(previous) ? [current, previous.value] : current
  )

const byMode: { readonly [M in Receiver.Credentials["type"]]: Config.Config<Receiver.Credentials> } = {
  hmac: Config.map(
    Config.all({
      secret: withPrevious("RECEIVER_SECRET", "RECEIVER_PREVIOUS_SECRET"),
      scheme: Config.literal(
        "waybill",
        "standard-webhooks"
      )("RECEIVER_SIGNATURE_SCHEME").pipe(Config.withDefault("waybill" as const))
    }),
    ({ secret, scheme }): Receiver.Credentials =>
      scheme === "standard-webhooks" ? { type: "hmac", secret, scheme } : { type: "hmac", secret }
  ),
  basic: Config.map(
    Config.all({
      username: Config.string("RECEIVER_USERNAME"),
      password: withPrevious("RECEIVER_PASSWORD", "RECEIVER_PREVIOUS_PASSWORD")
    }),
    ({ username, password }) => ({ type: "basic", username, password })
  ),
  bearer: Config.map(withPrevious("RECEIVER_TOKEN", "RECEIVER_PREVIOUS_TOKEN"), (token) => ({ type: "bearer", token }))
}

// A Config is an Effect in Effect 3, and Config has no flatMap: the mode picks the next Config.
const credentials: Effect.Effect<Receiver.Credentials, ConfigError.ConfigError> = Config.literal(
  "hmac",
  "basic",
  "bearer"
)("RECEIVER_AUTH").pipe(
  Config.withDefault("hmac" as const),
  Effect.flatMap((mode) => byMode[mode])
)

const bounded = (name: string, min: number, max: number, fallback: number) =>
  Config.integer(name).pipe(
    Config.mapOrFail((n) =>
      n >= min && n <= max
        ? Either.right(n)
        : Either.left(ConfigError.InvalidData([name], `must be an integer from ${min} to ${max}`))
    ),
    Config.withDefault(fallback)
  )

const settings = Config.all({
  // Config.port refuses 0, which a test (or a curious user) needs for "any free port".
  port: bounded("PORT", 0, 65_535, 3001),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  toleranceSeconds: bounded("RECEIVER_TOLERANCE_SECONDS", 0, 86_400, 300),
  maxBodyBytes: bounded("RECEIVER_MAX_BODY_BYTES", 1, 1024 * 1024 * 1024, 5 * 1024 * 1024),
  dedupCapacity: bounded("RECEIVER_DEDUP_CAPACITY", 1, 10_000_000, 10_000)
})

/**
 * Reads the receiver's configuration from the current `ConfigProvider`, reporting every
 * missing or invalid variable at once. Secrets are read as `Redacted` values, so they print
 * as `<redacted>` wherever a config object is logged.
 *
 * @since 0.1.0
 * @category config
 */
export const config: Effect.Effect<ReceiverConfig, ConfigError.ConfigError> = Effect.all([settings, credentials], {
  mode: "validate"
}).pipe(
  Effect.map(([base, credentials]) => ({ ...base, credentials })),
  Effect.mapError(([base, credentials]) => {
    const errors = [base, credentials].flatMap((error) => (error._tag === "Some" ? [error.value] : []))
    return errors.reduce((left, right) => ConfigError.And(left, right))
  })
)

/**
 * Reads the configuration from an environment (defaults to `process.env`). Fails with a
 * sentence naming every missing or invalid variable, never a value.
 *
 * @since 0.1.0
 * @category config
 */
export const fromEnv = (
  env: Readonly<Record<string, string | undefined>> = process.env
): Either.Either<ReceiverConfig, string> => {
  const entries = Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined)
  const provider = ConfigProvider.fromMap(new Map(entries))
  return Effect.runSync(
    Effect.either(Effect.withConfigProvider(config, provider)).pipe(Effect.map(Either.mapLeft(describe)))
  )
}

const describe = (error: ConfigError.ConfigError): string =>
  ConfigError.reduceWithContext(error, undefined, {
    andCase: (_, left: string, right: string) => `${left}; ${right}`,
    orCase: (_, left: string, right: string) => `${left}; ${right}`,
    invalidDataCase: (_, path, message) => `${path.join("_")}: ${message}`,
    // The missing-data message of a redacted config is itself redacted; say it plainly.
    missingDataCase: (_, path) => `${path.join("_")}: is required`,
    sourceUnavailableCase: (_, path, message) => `${path.join("_")}: ${message}`,
    unsupportedCase: (_, path, message) => `${path.join("_")}: ${message}`
  })
