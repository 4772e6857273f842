/**
 * Idempotent requests (contract §8): key checks, request fingerprints, and the run that creates
 * once, replays a kept answer or refuses. The rules: docs/webhooks.md (Idempotent requests).
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type IdempotencyRecord, IdempotencyStore, makeMemory } from "./IdempotencyStore.js"
import * as Issue from "./Issue.js"
import * as JsonDepth from "./JsonDepth.js"
import * as ValidationError from "./ValidationError.js"
import { CurrentWorkspace, type WorkspaceId } from "./Workspace.js"

/** The storage port and its helpers, also `@waybill/core/IdempotencyStore`. @since 0.1.0 */
export {
  type IdempotencyRecord,
  IdempotencyStore,
  makeMemory,
  sweepBatchSize,
  sweepExpired,
  writeInTransaction
} from "./IdempotencyStore.js"

/** The request header, and the path its issues are reported at. @since 0.1.0 */
export const header = "Idempotency-Key"

/** The answer header of a replay: `Idempotent-Replayed: true`. @since 0.1.0 */
export const replayedHeader = "Idempotent-Replayed"

/** A key's length, in characters (each a visible ASCII character, `!` to `~`). @since 0.1.0 */
export const keyLength = { min: 1, max: 255 } as const

/** How long a kept answer is kept at least: 24 hours, in seconds. The sweep deletes it after. @since 0.1.0 */
export const retentionSeconds = 86_400

/** The issues of a key (at path `Idempotency-Key`): none for 1 to 255 visible ASCII characters. @since 0.1.0 */
export const keyIssues = (key: unknown): ReadonlyArray<Issue.Issue> => {
  if (typeof key !== "string") return [Issue.make(header, "must be a string")]
  let valid = key.length >= keyLength.min && key.length <= keyLength.max
  for (let i = 0; valid && i < key.length; i++) {
    const code = key.charCodeAt(i)
    valid = code >= 0x21 && code <= 0x7e
  }
  return valid
    ? []
    : [
        Issue.make(
          header,
          `must be ${keyLength.min} to ${keyLength.max} visible ASCII characters (no spaces, no control or non-ASCII characters)`
        )
      ]
}

// The JSON text of a value with every object's keys in code-point order: the same value gives the
// same text, whatever the spacing or key order it was sent with.
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? "null" : canonical(item))).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>
    const keys = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/**
 * The fingerprint of a request body: SHA-256 (hex) of its canonical JSON, the same exactly for
 * the same JSON value; a body too deep for any operation gets one no accepted body has.
 * @since 0.1.0
 */
export const fingerprint = (body: unknown): string =>
  JsonDepth.isWithinDepth(body, 2 * JsonDepth.maxDepth)
    ? createHash("sha256").update(canonical(body), "utf8").digest("hex")
    : "too-deep"

/** The key was used before with another body or operation (422 `idempotency_key_reused`). @since 0.1.0 */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>(
  "@waybill/core/IdempotencyKeyReused"
)("IdempotencyKeyReused", { message: Schema.String }) {
  /** @since 0.1.0 */
  static of(operation: string): IdempotencyKeyReused {
    return new IdempotencyKeyReused({
      message: `This ${header} was already used with another request (another body, or another operation than ${operation}); use a new key for a new request.`
    })
  }
}

/**
 * A request with this key is still being processed (409 `conflict`): try again once it has
 * been answered.
 * @since 0.1.0
 */
export class IdempotencyKeyInFlight extends Schema.TaggedError<IdempotencyKeyInFlight>(
  "@waybill/core/IdempotencyKeyInFlight"
)("IdempotencyKeyInFlight", { message: Schema.String }) {
  /** @since 0.1.0 */
  static readonly instance = new IdempotencyKeyInFlight({
    message: `A request with this ${header} is still being processed; retry once it has been answered.`
  })
}

/**
 * What an idempotent operation answers: the value, whether it is a replay, and the status and
 * body (JSON text) to send, the same for the first answer and every replay.
 * @since 0.1.0
 */
export interface Outcome<A> {
  readonly value: A
  readonly replayed: boolean
  readonly status: number
  readonly body: string
}

/** A creation and its answer, written together with its record. @since 0.1.0 */
export interface Created<A> {
  readonly _tag: "Created"
  readonly value: A
  readonly status: number
  readonly body: string
}

/** Nothing written: the key was kept already when the creation came to be written. @since 0.1.0 */
export interface Taken {
  readonly _tag: "Taken"
}

/** A `Created` outcome. @since 0.1.0 */
export const created = <A>(value: A, status: number, body: string): Created<A> => ({
  _tag: "Created",
  value,
  status,
  body
})

/** The `Taken` outcome. @since 0.1.0 */
export const taken: Taken = { _tag: "Taken" }

/** The record a creation writes, waiting for its answer: `complete(status, body)` gives it. @since 0.1.0 */
export interface Pending {
  readonly workspaceId: WorkspaceId
  readonly key: string
  readonly operation: string
  readonly fingerprint: string
  readonly createdAt: number
  readonly expiresAt: number
  readonly complete: (status: number, body: string) => IdempotencyRecord
}

/**
 * One idempotent request: who asks, with which key, for which operation with which body, how
 * to create (writing the pending record with the creation) and how to read a kept answer back.
 * @since 0.1.0
 */
export interface Request<A, E, R> {
  readonly workspaceId: WorkspaceId
  readonly key: string
  /** The route, e.g. `POST /drafts`: the same key for another operation is refused. */
  readonly operation: string
  /** The request body as received. */
  readonly body: unknown
  readonly create: (pending: Pending) => Effect.Effect<Created<A> | Taken, E, R>
  /** The value of a kept answer, for a replay. */
  readonly replay: (record: IdempotencyRecord) => A
}

/** The service that runs idempotent requests over a store. @since 0.1.0 */
export class Idempotency extends Context.Tag("@waybill/core/Idempotency")<
  Idempotency,
  {
    readonly store: IdempotencyStore["Type"]
    /**
     * Runs an idempotent request: the key checked, refused while in flight in this process, else
     * created; a key kept already replays its answer for the same operation and body and is
     * `IdempotencyKeyReused` for another. A failed `create` with no kept answer keeps nothing.
     */
    readonly run: <A, E, R>(
      request: Request<A, E, R>
    ) => Effect.Effect<
      Outcome<A>,
      E | ValidationError.ValidationError | IdempotencyKeyReused | IdempotencyKeyInFlight,
      R
    >
  }
>() {}

/**
 * An idempotent request of the caller's workspace (see `runInCurrentWorkspace`): a `Request`
 * without its workspace, whose `create` also gets the store to write its record with.
 * @since 0.1.0
 */
export interface CurrentWorkspaceRequest<A, E, R> extends Omit<Request<A, E, R>, "workspaceId" | "create"> {
  readonly create: (pending: Pending, store: IdempotencyStore["Type"]) => Effect.Effect<Created<A> | Taken, E, R>
}

/**
 * Runs an idempotent request (see `Idempotency.run`) in the workspace of the current request,
 * with the `Idempotency` service in context.
 * @since 0.1.0
 */
export const runInCurrentWorkspace = <A, E, R>(
  request: CurrentWorkspaceRequest<A, E, R>
): Effect.Effect<
  Outcome<A>,
  E | ValidationError.ValidationError | IdempotencyKeyReused | IdempotencyKeyInFlight,
  R | CurrentWorkspace | Idempotency
> =>
  Effect.flatMap(CurrentWorkspace, (workspace) =>
    Effect.flatMap(Idempotency, (idempotency) =>
      idempotency.run({
        ...request,
        workspaceId: workspace.id,
        create: (pending) => request.create(pending, idempotency.store)
      })
    )
  )

/**
 * An idempotent operation of the caller's workspace, declared once: `create` makes the creation
 * for a body, with the pending record and the store; `replay` reads a kept answer back.
 * @since 0.1.0
 */
export interface Operation<A, E, R> extends Pick<Request<A, E, R>, "operation" | "replay"> {
  readonly create: (
    body: unknown,
    pending: Pending,
    store: IdempotencyStore["Type"]
  ) => Effect.Effect<Created<A> | Taken, E, R>
}

/**
 * What runs `definition` for a request body and its `Idempotency-Key`, in the caller's workspace
 * (`runInCurrentWorkspace`).
 * @since 0.1.0
 */
export const operation =
  <A, E, R>(definition: Operation<A, E, R>) =>
  (
    body: unknown,
    key: string
  ): Effect.Effect<
    Outcome<A>,
    E | ValidationError.ValidationError | IdempotencyKeyReused | IdempotencyKeyInFlight,
    R | CurrentWorkspace | Idempotency
  > =>
    runInCurrentWorkspace({
      key,
      operation: definition.operation,
      body,
      create: (pending, store) => definition.create(body, pending, store),
      replay: definition.replay
    })

/** The service over a store; keys in flight are tracked in this process. @since 0.1.0 */
export const make = (store: IdempotencyStore["Type"]): Idempotency["Type"] => {
  const inFlight = new Set<string>()
  const run = <A, E, R>(
    request: Request<A, E, R>
  ): Effect.Effect<
    Outcome<A>,
    E | ValidationError.ValidationError | IdempotencyKeyReused | IdempotencyKeyInFlight,
    R
  > =>
    Effect.suspend(
      (): Effect.Effect<
        Outcome<A>,
        E | ValidationError.ValidationError | IdempotencyKeyReused | IdempotencyKeyInFlight,
        R
      > => {
        const issues = keyIssues(request.key)
        if (issues.length > 0) return Effect.fail(ValidationError.fromIssues(issues, "request"))
        const slot = `${request.workspaceId}\u0000${request.key}`
        if (inFlight.has(slot)) return Effect.fail(IdempotencyKeyInFlight.instance)
        inFlight.add(slot)
        const print = fingerprint(request.body)
        const kept = (record: IdempotencyRecord) =>
          record.operation === request.operation && record.fingerprint === print
            ? Effect.succeed<Outcome<A>>({
                value: request.replay(record),
                replayed: true,
                status: record.status,
                body: record.body
              })
            : Effect.fail(IdempotencyKeyReused.of(request.operation))
        return Effect.gen(function* () {
          const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
          const pending: Pending = {
            workspaceId: request.workspaceId,
            key: request.key,
            operation: request.operation,
            fingerprint: print,
            createdAt: now,
            expiresAt: now + retentionSeconds,
            complete: (status, body) => ({
              workspaceId: request.workspaceId,
              key: request.key,
              operation: request.operation,
              fingerprint: print,
              status,
              body,
              createdAt: now,
              expiresAt: now + retentionSeconds
            })
          }
          const result = yield* Effect.either(request.create(pending))
          if (Either.isRight(result) && result.right._tag === "Created") {
            const { value, status, body } = result.right
            return { value, replayed: false, status, body } satisfies Outcome<A>
          }
          // Taken, or refused: a kept answer decides, if there is one.
          const found = yield* store.find(request.workspaceId, request.key)
          if (Option.isSome(found)) return yield* kept(found.value)
          // Taken but gone (swept between): the key was in use a moment ago.
          return yield* Either.isLeft(result) ? Effect.fail(result.left) : Effect.fail(IdempotencyKeyInFlight.instance)
        }).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              inFlight.delete(slot)
            })
          )
        )
      }
    )
  return Idempotency.of({ store, run })
}

/** The service over the `IdempotencyStore` in context. @since 0.1.0 */
export const layer: Layer.Layer<Idempotency, never, IdempotencyStore> = Layer.effect(
  Idempotency,
  Effect.map(IdempotencyStore, make)
)

/** The service over an in-memory store (also provided), for tests and embedders without storage. @since 0.1.0 */
export const layerMemory: Layer.Layer<Idempotency | IdempotencyStore> = Layer.effectContext(
  Effect.sync(() => {
    const store = makeMemory()
    return Context.make(IdempotencyStore, store).pipe(Context.add(Idempotency, make(store)))
  })
)

/** The answer of a creation: its value, and the status and body (JSON text) sent for it. @since 0.1.0 */
export interface Answer<A> {
  readonly value: A
  readonly status: number
  readonly body: string
}

/**
 * The end of a `create`: the pending record completed with `answer` and written with the
 * creation by `write` (true when it wrote both, false when the key was kept already, as
 * `writeInTransaction` answers); `Created` with the answer as kept, or `Taken`.
 * @since 0.1.0
 */
export const complete = <A, E, R>(
  pending: Pending,
  answer: Answer<A>,
  write: (record: IdempotencyRecord) => Effect.Effect<boolean, E, R>
): Effect.Effect<Created<A> | Taken, E, R> =>
  Effect.suspend(() => {
    const record = pending.complete(answer.status, answer.body)
    return Effect.map(write(record), (written) => (written ? created(answer.value, record.status, record.body) : taken))
  })
