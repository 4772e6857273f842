/**
 * End-to-end harness: the reference server on an ephemeral loopback port, on PGlite and (when
 * `DATABASE_URL` is set) on a fresh PostgreSQL database, talked to over real HTTP.
 */
import { describe, it, layer, type Vitest } from "@effect/vitest"
import { WorkspaceId } from "@waybill/core/Workspace"
import type { ServerConfig } from "@waybill/server/Config"
import type * as Generation from "@waybill/server/Generation"
import * as ReferenceDataFile from "@waybill/server/ReferenceDataFile"
import * as Server from "@waybill/server/Server"
import type { DatabaseConfig } from "@waybill/store-pg/Database"
import * as Testing from "@waybill/store-pg/Testing"
import { Effect, Layer, Option, Redacted, Schema } from "effect"

/** Two workspaces with one key each. */
export const keys = { a: "e2e-key-workspace-a-0001", b: "e2e-key-workspace-b-0002" } as const

export const testConfig = (database: DatabaseConfig, overrides: Partial<ServerConfig> = {}): ServerConfig => ({
  port: 0,
  host: "127.0.0.1",
  database,
  databaseUrl: Option.none(),
  apiKeys: Option.some([
    { workspaceId: Schema.decodeSync(WorkspaceId)("ws-a"), key: Redacted.make(keys.a) },
    { workspaceId: Schema.decodeSync(WorkspaceId)("ws-b"), key: Redacted.make(keys.b) }
  ]),
  allowPrivateTargets: true,
  secretKey: Option.some(Redacted.make("0".repeat(64))),
  retryDelayMs: 200,
  deliveryTimeoutMs: 2_000,
  generatorIntervalMs: 60_000,
  referenceDataPath: ReferenceDataFile.defaultPath,
  ...overrides
})

export const serverLayer = (
  backend: ReturnType<typeof Testing.backends>[number],
  overrides: Partial<ServerConfig> = {},
  options: Generation.Options = {}
) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const database = yield* backend.config
      const referenceData = yield* ReferenceDataFile.load(ReferenceDataFile.defaultPath)
      return Server.layer(testConfig(database, overrides), referenceData, options)
    })
  )

/** What a running server offers a test: its address, its ports, its tour generator. */
export type ServerServices = Layer.Layer.Success<ReturnType<typeof Server.layer>>

/** Runs a suite against a server per back end; says loudly when PostgreSQL is not tested. */
export const forEachServer = (
  name: string,
  suite: (it: Vitest.MethodsNonLive<ServerServices, true>) => void,
  overrides: Partial<ServerConfig> = {},
  options: Generation.Options = {}
) => {
  for (const backend of Testing.backends()) {
    layer(serverLayer(backend, overrides, options), { timeout: "120 seconds", excludeTestServices: true })(
      `${name} [${backend.name}]`,
      suite
    )
  }
  if (!process.env.DATABASE_URL) {
    describe(`${name} [postgres]`, () => {
      it.skip("NOT RUN: DATABASE_URL is not set, so this suite ran on PGlite only", () => {})
    })
  }
}

export interface Reply {
  readonly status: number
  readonly headers: Headers
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected ad hoc
  readonly body: any
  readonly text: string
}

/** One HTTP request to the server under test. */
export const call = (
  path: string,
  options: {
    readonly method?: string
    readonly key?: string
    readonly json?: unknown
    readonly body?: string
    readonly headers?: Record<string, string>
  } = {}
) =>
  Effect.gen(function* () {
    const base = yield* Server.baseUrl
    const headers: Record<string, string> = { ...options.headers }
    if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`
    let body = options.body
    if (options.json !== undefined) {
      body = JSON.stringify(options.json)
      headers["content-type"] ??= "application/json"
    }
    return yield* Effect.promise(async (): Promise<Reply> => {
      const response = await fetch(`${base}${path}`, {
        method: options.method ?? (body === undefined ? "GET" : "POST"),
        headers,
        ...(body === undefined ? {} : { body }),
        redirect: "manual"
      })
      const text = await response.text()
      let parsed: unknown
      try {
        parsed = text === "" ? undefined : JSON.parse(text)
      } catch {
        parsed = undefined
      }
      return { status: response.status, headers: response.headers, body: parsed, text }
    })
  })

/** Asserts the contract's error body (§1). */
export const isErrorBody = (reply: Reply, status: number, code: string): boolean =>
  reply.status === status &&
  reply.body?.code === code &&
  typeof reply.body?.message === "string" &&
  Array.isArray(reply.body?.issues) &&
  Object.keys(reply.body).sort().join(",") === "code,issues,message"
