/**
 * End-to-end harness: Waybill on an ephemeral loopback port, talked to over real HTTP, on PGlite
 * and (when `DATABASE_URL` is set) on a fresh PostgreSQL database, served by either of its hosts:
 * the reference server, or the Express application of `examples/embed` with Waybill mounted
 * under `/waybill` (`Waybill.toWebHandler` over the same ports).
 *
 * Servers log into memory: a test's log is printed after it only when the test failed, so a
 * passing run shows no expected failure (a delivery refused on purpose logs at WARN or ERROR).
 */
import type { Server as NodeServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as HttpServer from "@effect/platform/HttpServer"
import { afterEach, describe, it, layer, type Vitest } from "@effect/vitest"
import { WorkspaceId } from "@waybill/core/Workspace"
import * as ExpressHost from "@waybill/example-embed/express"
import type { ServerConfig } from "@waybill/server/Config"
import type * as Generation from "@waybill/server/Generation"
import * as ReferenceDataFile from "@waybill/server/ReferenceDataFile"
import * as Server from "@waybill/server/Server"
import * as Waybill from "@waybill/server/Waybill"
import type { DatabaseConfig } from "@waybill/store-pg/Database"
import * as Testing from "@waybill/store-pg/Testing"
import { Context, Effect, Layer, Logger, Option, Redacted, Schema } from "effect"
import { jsonRun, report } from "./json-logs.js"

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

/**
 * The log of a suite's servers, kept in memory (the last 5,000 lines) instead of printed. With
 * `showOnFailure` (called while a suite is being collected), the lines logged during each of
 * its tests are printed after the test if it failed, and dropped otherwise.
 */
export const testLog = (name: string) => {
  const lines: Array<string> = []
  const logger = Logger.make((options) => {
    lines.push((jsonRun ? Logger.jsonLogger : Logger.logfmtLogger).log(options))
    if (lines.length > 5_000) lines.splice(0, lines.length - 5_000)
  })
  return {
    lines,
    /** Replaces the default logger of whatever it is provided to. */
    layer: Logger.replace(Logger.defaultLogger, logger),
    showOnFailure: () =>
      afterEach((context) => {
        if (context.task.result?.state === "fail" && lines.length > 0) {
          report(`--- the log of ${name} during "${context.task.name}" ---`)
          console.log(lines.join("\n"))
        }
        lines.length = 0
      })
  }
}

/** Where the Express host serves the API: its `/waybill` URL, for the `HttpServer` it belongs to. */
export class BaseUrl extends Context.Tag("waybill/test/BaseUrl")<
  BaseUrl,
  { readonly server: HttpServer.HttpServer; readonly url: string }
>() {}

/**
 * The base URL of the API under test: the Express host's `/waybill`, or the reference server's
 * address (use it rather than `Server.baseUrl`, which knows no mount path). A server a test
 * starts itself and provides over the suite's is asked for its own address.
 */
export const baseUrl: Effect.Effect<string, never, HttpServer.HttpServer> = Effect.gen(function* () {
  const server = yield* HttpServer.HttpServer
  const mounted = yield* Effect.serviceOption(BaseUrl)
  return Option.isSome(mounted) && mounted.value.server === server ? mounted.value.url : yield* Server.baseUrl
})

/** Which application serves Waybill in a suite. */
export type Host = "reference" | "express"

/** A suite's options: the server's (`clock`, generator tuning) and its hosts (both by default). */
export interface SuiteOptions extends Generation.Options {
  readonly hosts?: ReadonlyArray<Host> | undefined
}

/** The reference server, as `npm start` wires it. */
export const serverLayer = (
  backend: ReturnType<typeof Testing.backends>[number],
  overrides: Partial<ServerConfig> = {},
  options: Generation.Options = {},
  log: ReturnType<typeof testLog> = testLog("the server")
) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const database = yield* backend.config
      const referenceData = yield* ReferenceDataFile.load(ReferenceDataFile.defaultPath)
      return Server.layer(testConfig(database, overrides), referenceData, options)
    })
  ).pipe(Layer.provide(log.layer))

const listening = (server: NodeServer) =>
  new Promise<AddressInfo>((resolve, reject) => {
    server.once("error", reject)
    server.once("listening", () => resolve(server.address() as AddressInfo))
  })

/**
 * The Express application of `examples/embed` with Waybill under `/waybill`: the reference
 * server's ports and background loops, served by `Waybill.toWebHandler` (what `Waybill.make`
 * serves). It offers what `serverLayer` does; its `HttpServer` is the Express server's address,
 * and `BaseUrl` ends in `/waybill`.
 */
export const expressLayer = (
  backend: ReturnType<typeof Testing.backends>[number],
  overrides: Partial<ServerConfig> = {},
  options: Generation.Options = {},
  log: ReturnType<typeof testLog> = testLog("the Express host")
) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const database = yield* backend.config
      const referenceData = yield* ReferenceDataFile.load(ReferenceDataFile.defaultPath)
      const config = testConfig(database, overrides)
      const ports = Layer.provideMerge(
        Server.layerBackground(config),
        Server.layerPorts(config, referenceData, options)
      )
      const host = Layer.scopedContext(
        Effect.gen(function* () {
          const context = yield* Layer.build(ports)
          const web = yield* Effect.acquireRelease(
            Effect.sync(() => Waybill.toWebHandler(context, { basePath: "/waybill", clock: options.clock })),
            (web) => Effect.promise(() => web.dispose())
          )
          const server = yield* Effect.acquireRelease(
            Effect.sync(() => ExpressHost.application(web).listen(0, "127.0.0.1")),
            (server) =>
              Effect.async<void>((resume) => {
                server.close(() => resume(Effect.void))
                server.closeAllConnections()
              })
          )
          const { port } = yield* Effect.promise(() => listening(server))
          const express = HttpServer.make({
            serve: () => Effect.dieMessage("the Express host serves its own routes"),
            address: { _tag: "TcpAddress", hostname: "127.0.0.1", port }
          })
          return context.pipe(
            Context.add(HttpServer.HttpServer, express),
            Context.add(BaseUrl, { server: express, url: `http://127.0.0.1:${port}/waybill` })
          )
        })
      )
      return options.clock === undefined ? host : Layer.provide(host, Layer.setClock(options.clock))
    })
  ).pipe(Layer.provide(log.layer))

/**
 * What a running server offers a test, on either host: its address (`HttpServer`, and
 * `BaseUrl` under the Express host), its ports, its tour generator.
 */
export type ServerServices = Exclude<Layer.Layer.Success<ReturnType<typeof expressLayer>>, BaseUrl>

/**
 * Runs a suite against a server per back end and per host (the reference server and the
 * Express host, unless `options.hosts` says otherwise); says loudly when PostgreSQL is not
 * tested. Each test's server log is shown only if the test fails.
 *
 * Every pair of a back end and a host is covered, not every combination: the reference server
 * on each back end, and the Express host on PGlite. The host only adapts HTTP above the same
 * ports and the back end sits below them, so Express on PostgreSQL would run the code of the
 * other three again (docs/decisions/0038-end-to-end-suites-each-back-end-and-host.md).
 */
export const forEachServer = (
  name: string,
  suite: (it: Vitest.MethodsNonLive<ServerServices, true>) => void,
  overrides: Partial<ServerConfig> = {},
  options: SuiteOptions = {}
) => {
  const { hosts = ["reference", "express"], ...serverOptions } = options
  for (const backend of Testing.backends()) {
    for (const host of hosts) {
      if (host === "express" && backend.name === "postgres" && hosts.includes("reference")) continue
      const title = `${name} [${backend.name}${host === "express" ? ", express" : ""}]`
      const log = testLog(title)
      const served: Layer.Layer<ServerServices, unknown> =
        host === "express"
          ? expressLayer(backend, overrides, serverOptions, log)
          : serverLayer(backend, overrides, serverOptions, log)
      layer(served, { timeout: "120 seconds", excludeTestServices: true })(title, (it) => {
        log.showOnFailure()
        suite(it)
      })
    }
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
    const base = yield* baseUrl
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
