/**
 * The operator console (contract §5, the spec's Settings → Webhooks): a page for webhooks, their
 * filters, delivery logs and alerts, bundled with the server and mounted beside the API
 * (`Console.layer()` or `Console.toWebHandler`). Details: docs/console.md and docs/internals.md
 * (Console).
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Bundle from "./internal/bundle.js"

/**
 * Where the console lives, relative to the API's root (default `/console`), and the origins that
 * may frame it (`WAYBILL_CONSOLE_FRAME_ANCESTORS`; none by default).
 * @since 0.1.0
 */
export interface Options {
  readonly path?: string | undefined
  /** Origins (`https://app.example.com`) whose pages may frame the console; also the only origins `?return=` may point to. */
  readonly frameAncestors?: ReadonlyArray<string> | undefined
}

/**
 * Parses a space-separated list of origins (`WAYBILL_CONSOLE_FRAME_ANCESTORS`): each an http or
 * https scheme, a host and an optional port, nothing else; the reason when one is not.
 * @since 0.3.0
 */
export const parseFrameAncestors = (
  value: string
): { readonly origins: ReadonlyArray<string> } | { readonly error: string } => {
  const origins: Array<string> = []
  for (const entry of value.split(/\s+/).filter((part) => part !== "")) {
    let url: URL | undefined
    try {
      url = new URL(entry)
    } catch {
      url = undefined
    }
    if (
      url === undefined ||
      (url.protocol !== "https:" && url.protocol !== "http:") ||
      url.origin !== entry.replace(/\/$/, "")
    ) {
      return {
        error: `${JSON.stringify(entry.slice(0, 100))} is not an origin: give a scheme, host and optional port only, such as https://app.example.com`
      }
    }
    origins.push(url.origin)
  }
  return { origins }
}

/** One answer of the console: status, headers and body. @since 0.1.0 */
export interface Asset {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

// Nothing but this origin, no inline script or style, framed only by the origins configured.
const contentSecurityPolicy = (frameAncestors: ReadonlyArray<string>) =>
  [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors.length === 0 ? "'none'" : frameAncestors.join(" ")}`
  ].join("; ")

const securityHeaders = (options: Options) => ({
  "content-security-policy": contentSecurityPolicy(options.frameAncestors ?? []),
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin"
})

const escapeAttribute = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

// The host's page to go back to when a console token expires: only to an origin that may frame
// the console, so that the link cannot point anywhere else.
const returnLink = (search: string, options: Options): string | undefined => {
  const wanted = new URLSearchParams(search).get("return")
  if (wanted === null || wanted.length > 2048) return undefined
  try {
    const url = new URL(wanted)
    return (url.protocol === "https:" || url.protocol === "http:") &&
      (options.frameAncestors ?? []).includes(url.origin)
      ? url.href
      : undefined
  } catch {
    return undefined
  }
}

// Relative asset URLs keep the page working under any mount prefix: from `…/console` they
// resolve to `…/console/assets/…`, from `…/console/` to the same place.
const page = (assets: string, back: string | undefined) => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Waybill console</title>
    <link rel="icon" href="data:,">${back === undefined ? "" : `\n    <meta name="waybill-return" content="${escapeAttribute(back)}">`}
    <link rel="stylesheet" href="${assets}/app.css">
    <script type="module" src="${assets}/app.js"></script>
  </head>
  <body>
    <div id="app"><p class="loading">Loading the Waybill console…</p></div>
    <noscript>The Waybill console needs JavaScript.</noscript>
  </body>
</html>
`

let bundle: Promise<Bundle.Bundle> | undefined
// Built once per process, on first use; a failed build is tried again on the next request.
const loadBundle = () => {
  bundle ??= Bundle.load().catch((error: unknown) => {
    bundle = undefined
    throw error
  })
  return bundle
}

const normalise = (path: string | undefined) => `/${(path ?? "/console").replace(/^\/+|\/+$/g, "")}`

/**
 * The console's answer for a request path (relative to the API's root) and query (`?return=`),
 * or none when the path is not the console's. Fails only if the page script cannot be built.
 * @since 0.1.0
 */
export const answer = (
  pathname: string,
  options: Options = {},
  search = ""
): Effect.Effect<Option.Option<Asset>, Error> => {
  const base = normalise(options.path)
  const name = base.slice(base.lastIndexOf("/") + 1)
  if (pathname === base || pathname === `${base}/`) {
    const assets = pathname === base ? `${name}/assets` : "assets"
    return Effect.succeed(
      Option.some({
        status: 200,
        headers: {
          ...securityHeaders(options),
          "content-type": "text/html; charset=utf-8",
          "cache-control": "no-cache"
        },
        body: page(assets, returnLink(search, options))
      })
    )
  }
  const kind = pathname === `${base}/assets/app.js` ? "script" : pathname === `${base}/assets/app.css` ? "style" : null
  if (kind === null) return Effect.succeed(Option.none())
  return Effect.tryPromise({
    try: loadBundle,
    catch: (cause) => new Error("The console's page script could not be built", { cause })
  }).pipe(
    Effect.map((built) =>
      Option.some({
        status: 200,
        headers: {
          ...securityHeaders(options),
          "content-type": kind === "script" ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8",
          "cache-control": "no-cache"
        },
        body: kind === "script" ? built.script : built.style
      })
    )
  )
}

const toResponse = (asset: Asset) =>
  HttpServerResponse.text(asset.body, {
    status: asset.status,
    headers: asset.headers,
    contentType: asset.headers["content-type"]
  })

/** The console's routes on `HttpApiBuilder.Router`: give it to `Http.layerServerWith`. @since 0.1.0 */
export const layer = (options: Options = {}): Layer.Layer<never> => {
  const base = normalise(options.path)
  const handler = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const url = new URL(request.url, "http://console.local")
    return answer(url.pathname, options, url.search).pipe(
      Effect.map(Option.match({ onNone: () => HttpServerResponse.empty({ status: 404 }), onSome: toResponse })),
      Effect.orDie
    )
  })
  return HttpApiBuilder.Router.use((router) =>
    Effect.all([
      // One route serves `base` and `base/` (the router ignores a trailing slash).
      router.get(base as `/${string}`, handler),
      router.get(`${base}/assets/app.js` as `/${string}`, handler),
      router.get(`${base}/assets/app.css` as `/${string}`, handler)
    ])
  )
}

/**
 * The console as a Fetch-style handler, in front of the API's web handler `next` (mount both at
 * the API's root): GET and HEAD of the console's page and assets are answered here, everything
 * else (the console's own API route included) goes to `next`, or 404 without one.
 * @since 0.1.0
 */
export const toWebHandler =
  (options: Options & { readonly next?: ((request: Request) => Promise<Response>) | undefined } = {}) =>
  async (request: Request): Promise<Response> => {
    const next = options.next ?? (async () => new Response(null, { status: 404 }))
    if (request.method !== "GET" && request.method !== "HEAD") return next(request)
    const url = new URL(request.url)
    const found = await Effect.runPromise(Effect.either(answer(url.pathname, options, url.search)))
    if (found._tag === "Left") {
      return Response.json(
        { code: "internal", message: "The console could not be built.", issues: [] },
        { status: 500 }
      )
    }
    return Option.match(found.right, {
      onNone: () => next(request),
      onSome: (asset) => new Response(request.method === "HEAD" ? null : asset.body, asset)
    })
  }
