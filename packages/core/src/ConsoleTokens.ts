/**
 * Console tokens (contract §5): short-lived, revocable credentials a host hands its own users so
 * that they can use the operator console of one workspace, with `read` or `manage` scope. Stored
 * only as their SHA-256 hash and checked in constant time, as API keys are.
 * @since 0.3.0
 */
import { randomBytes } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Id from "./Id.js"
import { type Issue, make as makeIssue } from "./Issue.js"
import { digest, makeDigestCache, sameDigest } from "./internal/digestCache.js"
import { fromIssues, type ValidationError } from "./ValidationError.js"
import type { WorkspaceId } from "./Workspace.js"

/** What a token may do: `read` the console's pages, or also `manage` webhooks. @since 0.3.0 */
export const ConsoleTokenScope = Schema.Literal("read", "manage")

/** @since 0.3.0 */
export type ConsoleTokenScope = typeof ConsoleTokenScope.Type

/** The shortest lifetime a token may be minted with, in seconds. @since 0.3.0 */
export const minTtlSeconds = 60

/** The longest lifetime a token may be minted with (7 days), in seconds. @since 0.3.0 */
export const maxTtlSeconds = 604_800

/** The lifetime of a token minted without `ttlSeconds` (1 hour). @since 0.3.0 */
export const defaultTtlSeconds = 3_600

/** The longest label, in characters. @since 0.3.0 */
export const maxLabelLength = 100

/** The body of `POST /console/tokens` and of `consoleToken(…)` in process. @since 0.3.0 */
export const MintRequest = Schema.Struct({
  ttlSeconds: Schema.optional(Schema.Int.pipe(Schema.between(minTtlSeconds, maxTtlSeconds))),
  scope: Schema.optional(ConsoleTokenScope),
  label: Schema.optional(Schema.String.pipe(Schema.maxLength(maxLabelLength)))
})

/** A mint request with its defaults applied. @since 0.3.0 */
export interface MintOptions {
  readonly ttlSeconds: number
  readonly scope: ConsoleTokenScope
  readonly label: string | null
}

/** A token as listed: everything but its value. @since 0.3.0 */
export const ConsoleTokenInfo = Schema.Struct({
  id: Schema.String,
  scope: ConsoleTokenScope,
  label: Schema.NullOr(Schema.String),
  createdAt: Schema.Int,
  expiresAt: Schema.Int
}).annotations({ identifier: "ConsoleToken" })

/** @since 0.3.0 */
export type ConsoleTokenInfo = typeof ConsoleTokenInfo.Type

/** A stored token, without its value. @since 0.3.0 */
export interface ConsoleTokenRecord extends ConsoleTokenInfo {
  readonly workspaceId: WorkspaceId
  readonly revokedAt: number | null
}

/** Who presented a valid token. @since 0.3.0 */
export interface ConsoleTokenPrincipal {
  readonly workspaceId: WorkspaceId
  readonly tokenId: string
  readonly scope: ConsoleTokenScope
  readonly label: string | null
  readonly expiresAt: number
}

/** Storage of minted tokens. In memory here, on PostgreSQL in `@waybill/store-pg`. @since 0.3.0 */
export class ConsoleTokenStore extends Context.Tag("@waybill/core/ConsoleTokenStore")<
  ConsoleTokenStore,
  {
    readonly insert: (record: ConsoleTokenRecord & { readonly hash: string }) => Effect.Effect<void>
    readonly find: (id: string) => Effect.Effect<Option.Option<ConsoleTokenRecord & { readonly hash: string }>>
    /** The workspace's tokens neither revoked nor expired at `now`, newest first. */
    readonly listLive: (workspaceId: WorkspaceId, now: number) => Effect.Effect<ReadonlyArray<ConsoleTokenRecord>>
    /** Revokes a live token of the workspace; `false` when it has none by that id. */
    readonly revoke: (workspaceId: WorkspaceId, id: string, at: number) => Effect.Effect<boolean>
  }
>() {}

/** The token service: mint, authenticate, list, revoke. @since 0.3.0 */
export class ConsoleTokens extends Context.Tag("@waybill/core/ConsoleTokens")<
  ConsoleTokens,
  {
    readonly authenticate: (presented: Redacted.Redacted<string>) => Effect.Effect<Option.Option<ConsoleTokenPrincipal>>
    /** Mints a token; its value is returned once and never stored. */
    readonly mint: (
      workspaceId: WorkspaceId,
      options: MintOptions
    ) => Effect.Effect<{ readonly record: ConsoleTokenRecord; readonly token: Redacted.Redacted<string> }>
    readonly list: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<ConsoleTokenRecord>>
    readonly revoke: (workspaceId: WorkspaceId, id: string) => Effect.Effect<boolean>
  }
>() {}

const decodeMint = Schema.decodeUnknownEither(MintRequest, { errors: "all", onExcessProperty: "error" })

const FIELD_RULES: Record<string, string> = {
  ttlSeconds: `must be an integer from ${minTtlSeconds} to ${maxTtlSeconds} (seconds)`,
  scope: 'must be "read" or "manage"',
  label: `must be a string of at most ${maxLabelLength} characters`
}

/**
 * Checks a mint request and applies its defaults (1 hour, `manage`, no label); every problem is
 * an issue at its field. @since 0.3.0
 */
export const validateMint = (input: unknown): Either.Either<MintOptions, ValidationError> => {
  if (input === undefined || input === null) return Either.right(withDefaults({}))
  if (typeof input !== "object" || Array.isArray(input)) {
    return Either.left(fromIssues([makeIssue("", "must be an object")], "console token request"))
  }
  const issues: Array<Issue> = []
  for (const key of Object.keys(input)) {
    if (FIELD_RULES[key] === undefined) issues.push(makeIssue(key, "is not a field of a console token request"))
    else if (Either.isLeft(decodeMint({ [key]: (input as Record<string, unknown>)[key] }))) {
      issues.push(makeIssue(key, FIELD_RULES[key]))
    }
  }
  if (issues.length > 0) return Either.left(fromIssues(issues, "console token request"))
  return Either.map(
    Either.mapLeft(decodeMint(input), () => fromIssues([makeIssue("", "is not valid")], "console token request")),
    withDefaults
  )
}

const withDefaults = (request: typeof MintRequest.Type): MintOptions => ({
  ttlSeconds: request.ttlSeconds ?? defaultTtlSeconds,
  scope: request.scope ?? "manage",
  label: request.label ?? null
})

/** SHA-256 of a token, lowercase hex. @since 0.3.0 */
export const hash = (token: string): string => digest(token).toString("hex")

const TOKEN = /^wbc_([0-9a-hjkmnp-tv-z]{26})_[A-Za-z0-9_-]{43}$/

/** Whether a presented credential has the form of a console token (`wbc_…`), valid or not. @since 0.3.0 */
export const looksLikeToken = (credential: string): boolean => credential.startsWith("wbc_")

/** The token id (`cst_…`) of a token, if the string has that form. @since 0.3.0 */
export const tokenId = (token: string): Option.Option<string> => {
  const match = TOKEN.exec(token)
  return match === null ? Option.none() : Option.some(`cst_${match[1]}`)
}

const DIGEST_CACHE_CAPACITY = 1024

const nowSeconds = Effect.map(Clock.currentTimeMillis, (now) => Math.floor(now / 1000))

/** Builds the token service over a `ConsoleTokenStore`. @since 0.3.0 */
export const make = Effect.gen(function* () {
  const store = yield* ConsoleTokenStore
  // Digests only, never validity, so expiry and revocation hold at once.
  const digests = makeDigestCache(digest, DIGEST_CACHE_CAPACITY)

  const authenticate = (presented: Redacted.Redacted<string>) =>
    Effect.gen(function* () {
      const token = Redacted.value(presented)
      const id = tokenId(token)
      if (Option.isNone(id)) return Option.none<ConsoleTokenPrincipal>()
      const presentedDigest = digests.digest(token)
      const stored = yield* store.find(id.value)
      if (Option.isNone(stored)) return Option.none<ConsoleTokenPrincipal>()
      const now = yield* nowSeconds
      const record = stored.value
      const matches = sameDigest(presentedDigest, Buffer.from(record.hash, "hex"))
      return matches && record.revokedAt === null && now < record.expiresAt
        ? Option.some({
            workspaceId: record.workspaceId,
            tokenId: record.id,
            scope: record.scope,
            label: record.label,
            expiresAt: record.expiresAt
          })
        : Option.none<ConsoleTokenPrincipal>()
    })

  const mint = (workspaceId: WorkspaceId, options: MintOptions) =>
    Effect.gen(function* () {
      const id = yield* Id.make("cst")
      const token = `wbc_${id.slice(4)}_${randomBytes(32).toString("base64url")}`
      const createdAt = yield* nowSeconds
      const record: ConsoleTokenRecord = {
        id,
        workspaceId,
        scope: options.scope,
        label: options.label,
        createdAt,
        expiresAt: createdAt + options.ttlSeconds,
        revokedAt: null
      }
      yield* store.insert({ ...record, hash: hash(token) })
      return { record, token: Redacted.make(token) }
    })

  return ConsoleTokens.of({
    authenticate,
    mint,
    list: (workspaceId) => Effect.flatMap(nowSeconds, (now) => store.listLive(workspaceId, now)),
    revoke: (workspaceId, id) => Effect.flatMap(nowSeconds, (now) => store.revoke(workspaceId, id, now))
  })
})

/** The token service over the `ConsoleTokenStore` in context. @since 0.3.0 */
export const layer: Layer.Layer<ConsoleTokens, never, ConsoleTokenStore> = Layer.effect(ConsoleTokens, make)

/** An in-memory `ConsoleTokenStore`. @since 0.3.0 */
export const layerStoreMemory: Layer.Layer<ConsoleTokenStore> = Layer.effect(
  ConsoleTokenStore,
  Effect.gen(function* () {
    const tokens = yield* Ref.make(new Map<string, ConsoleTokenRecord & { readonly hash: string }>())
    const live = (record: ConsoleTokenRecord, workspaceId: WorkspaceId, now: number) =>
      record.workspaceId === workspaceId && record.revokedAt === null && now < record.expiresAt
    return ConsoleTokenStore.of({
      insert: (record) => Ref.update(tokens, (map) => new Map(map).set(record.id, record)),
      find: (id) => Effect.map(Ref.get(tokens), (map) => Option.fromNullable(map.get(id))),
      listLive: (workspaceId, now) =>
        Effect.map(Ref.get(tokens), (map) =>
          [...map.values()]
            .filter((record) => live(record, workspaceId, now))
            .map(({ hash: _hash, ...record }) => record)
            .sort((a, b) => (a.id < b.id ? 1 : -1))
        ),
      revoke: (workspaceId, id, at) =>
        Ref.modify(tokens, (map) => {
          const record = map.get(id)
          if (record === undefined || !live(record, workspaceId, at)) return [false, map]
          return [true, new Map(map).set(id, { ...record, revokedAt: at })]
        })
    })
  })
)
