/**
 * API keys: each belongs to one workspace, is stored only as its SHA-256 hash and is compared in
 * constant time. Issued and configured keys: docs/internals.md (ApiKeys).
 * @since 0.1.0
 */
import { randomBytes } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Id from "./Id.js"
import { digest, makeDigestCache, sameDigest } from "./internal/digestCache.js"
import type { WorkspaceId } from "./Workspace.js"

/** A stored key, without its secret. @since 0.1.0 */
export interface ApiKeyRecord {
  readonly id: string
  readonly workspaceId: WorkspaceId
  readonly createdAt: number
  readonly revokedAt: number | null
}

/** Who presented a valid key. @since 0.1.0 */
export interface Principal {
  readonly workspaceId: WorkspaceId
  readonly apiKeyId: string
}

/** Storage of issued keys. Implemented in memory here and on PostgreSQL by `@waybill/store-pg`. @since 0.1.0 */
export class ApiKeyStore extends Context.Tag("@waybill/core/ApiKeyStore")<
  ApiKeyStore,
  {
    readonly insert: (record: ApiKeyRecord & { readonly hash: string }) => Effect.Effect<void>
    readonly find: (id: string) => Effect.Effect<Option.Option<ApiKeyRecord & { readonly hash: string }>>
    readonly list: Effect.Effect<ReadonlyArray<ApiKeyRecord>>
    readonly revoke: (id: string, at: number) => Effect.Effect<boolean>
  }
>() {}

/** Keys given in configuration, as `workspaceId` and key pairs. @since 0.1.0 */
export interface StaticKey {
  readonly workspaceId: WorkspaceId
  readonly key: Redacted.Redacted<string>
}

/** The key service: issue, authenticate, list, revoke. @since 0.1.0 */
export class ApiKeys extends Context.Tag("@waybill/core/ApiKeys")<
  ApiKeys,
  {
    readonly authenticate: (presented: Redacted.Redacted<string>) => Effect.Effect<Option.Option<Principal>>
    /** Issues a key; the returned key is shown once and never stored. */
    readonly create: (
      workspaceId: WorkspaceId
    ) => Effect.Effect<{ readonly record: ApiKeyRecord; readonly key: Redacted.Redacted<string> }>
    readonly list: Effect.Effect<ReadonlyArray<ApiKeyRecord>>
    readonly revoke: (id: string) => Effect.Effect<boolean>
  }
>() {}

/** SHA-256 of a key, lowercase hex. @since 0.1.0 */
export const hash = (key: string): string => digest(key).toString("hex")

const DIGEST_CACHE_CAPACITY = 1024

const ISSUED = /^wbk_([0-9a-hjkmnp-tv-z]{26})_[A-Za-z0-9_-]{43}$/

/** The key id of an issued key, if the string has that form. @since 0.1.0 */
export const issuedKeyId = (key: string): Option.Option<string> => {
  const match = ISSUED.exec(key)
  return match === null ? Option.none() : Option.some(`key_${match[1]}`)
}

/** Builds the key service over an `ApiKeyStore` and the statically configured keys. @since 0.1.0 */
export const make = (staticKeys: ReadonlyArray<StaticKey>) =>
  Effect.gen(function* () {
    const store = yield* ApiKeyStore
    const configured = staticKeys.map((entry, index) => ({
      workspaceId: entry.workspaceId,
      apiKeyId: `env-${index + 1}`,
      digest: digest(Redacted.value(entry.key))
    }))
    // Digests only, never validity, so revocation holds at once (docs/decisions/0005).
    const digests = makeDigestCache(digest, DIGEST_CACHE_CAPACITY)

    const authenticate = (presented: Redacted.Redacted<string>) =>
      Effect.gen(function* () {
        const key = Redacted.value(presented)
        if (key.length === 0 || key.length > 512) return Option.none<Principal>()
        const presentedDigest = digests.digest(key)
        let found: Principal | undefined
        for (const entry of configured) {
          // Compare against every entry, without stopping early, so timing tells nothing.
          if (sameDigest(presentedDigest, entry.digest) && found === undefined) {
            found = { workspaceId: entry.workspaceId, apiKeyId: entry.apiKeyId }
          }
        }
        if (found !== undefined) return Option.some(found)
        const id = issuedKeyId(key)
        if (Option.isNone(id)) return Option.none<Principal>()
        const stored = yield* store.find(id.value)
        return Option.filterMap(stored, (record) =>
          record.revokedAt === null && sameDigest(presentedDigest, Buffer.from(record.hash, "hex"))
            ? Option.some({ workspaceId: record.workspaceId, apiKeyId: record.id })
            : Option.none()
        )
      })

    const create = (workspaceId: WorkspaceId) =>
      Effect.gen(function* () {
        const id = yield* Id.make("key")
        const key = `wbk_${id.slice(4)}_${randomBytes(32).toString("base64url")}`
        const record: ApiKeyRecord = {
          id,
          workspaceId,
          createdAt: Math.floor((yield* Clock.currentTimeMillis) / 1000),
          revokedAt: null
        }
        yield* store.insert({ ...record, hash: hash(key) })
        return { record, key: Redacted.make(key) }
      })

    const revoke = (id: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => store.revoke(id, Math.floor(now / 1000)))

    return ApiKeys.of({ authenticate, create, list: store.list, revoke })
  })

/** The key service over the `ApiKeyStore` in context. @since 0.1.0 */
export const layer = (staticKeys: ReadonlyArray<StaticKey>): Layer.Layer<ApiKeys, never, ApiKeyStore> =>
  Layer.effect(ApiKeys, make(staticKeys))

/** An in-memory `ApiKeyStore`. @since 0.1.0 */
export const layerStoreMemory: Layer.Layer<ApiKeyStore> = Layer.effect(
  ApiKeyStore,
  Effect.gen(function* () {
    const keys = yield* Ref.make(new Map<string, ApiKeyRecord & { readonly hash: string }>())
    return ApiKeyStore.of({
      insert: (record) => Ref.update(keys, (map) => new Map(map).set(record.id, record)),
      find: (id) => Effect.map(Ref.get(keys), (map) => Option.fromNullable(map.get(id))),
      list: Effect.map(Ref.get(keys), (map) =>
        [...map.values()].map(({ hash: _hash, ...record }) => record).sort((a, b) => (a.id < b.id ? -1 : 1))
      ),
      revoke: (id, at) =>
        Ref.modify(keys, (map) => {
          const record = map.get(id)
          if (record === undefined || record.revokedAt !== null) return [false, map]
          return [true, new Map(map).set(id, { ...record, revokedAt: at })]
        })
    })
  })
)
