/**
 * `GET /docs`, the platform's Scalar page built per request from its file: `HttpApiScalar.layer`
 * would hold Scalar's script in the heap for the server's whole life (docs/decisions/0100).
 */
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"

// Holds the script as `export const javascript = "…";` (a JSON string literal).
const scriptModule = () =>
  join(
    dirname(createRequire(import.meta.url).resolve("@effect/platform/package.json")),
    "dist/esm/internal/httpApiScalar.js"
  )

const DECLARATION = "export const javascript="

/** Scalar's script, read from the platform's module without importing it. */
export const readScript = async (): Promise<string> => {
  const text = await readFile(scriptModule(), "utf8")
  const start = text.indexOf(DECLARATION)
  const end = text.lastIndexOf('";')
  if (start === -1 || end < start) throw new Error("The API reference's script was not found in @effect/platform")
  return JSON.parse(text.slice(start + DECLARATION.length, end + 1)) as string
}

// As the platform escapes them (`internal/html.ts`): JSON inside a <script> element, and text.
const escapeJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/[\u2028\u2029]/g, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"))
const escapeText = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
const escapeAttribute = (text: string) => escapeText(text).replace(/"/g, "&quot;").replace(/'/g, "&#39;")

// The API key's scheme is selected from the start (every route but /health and /ready needs it).
const configuration = {
  _integration: "html",
  authentication: { preferredSecurityScheme: "apiKey" },
  // No fonts from Scalar's CDN: the page loads nothing from another origin.
  withDefaultFonts: false
}

/** The page `HttpApiScalar.layer` serves for `spec`, with `script` inline. */
export const page = (spec: OpenApi.OpenAPISpec, script: string): string => {
  const description = spec.info.description
    ? `<meta name="description" content="${escapeAttribute(spec.info.description)}"/>
    <meta name="og:description" content="${escapeAttribute(spec.info.description)}"/>`
    : ""
  return `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>${escapeText(spec.info.title)}</title>
    <link rel="icon" href="data:," />
    ${description}
    <meta
      name="viewport"
      content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <script id="api-reference" type="application/json">
      ${escapeJson(spec)}
    </script>
    <script>
      document.getElementById('api-reference').dataset.configuration = JSON.stringify(${escapeJson(configuration)})
    </script>
    <script>${script}</script>
  </body>
</html>`
}

/** The reference page of the API in context at `path`, in place of `HttpApiScalar.layer({ path })`. */
export const layer = (path: `/${string}`): Layer.Layer<never, never, HttpApi.Api> =>
  HttpApiBuilder.Router.use((router) =>
    Effect.flatMap(HttpApi.Api, ({ api }) =>
      router.get(
        path,
        Effect.map(Effect.promise(readScript), (script) => HttpServerResponse.html(page(OpenApi.fromApi(api), script)))
      )
    )
  )
