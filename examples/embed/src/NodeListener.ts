/**
 * Turns a Fetch-style handler `(Request) => Promise<Response>` (what `Http.toWebHandler`
 * returns) into a Node `(req, res)` listener, for `node:http` and for Express, which is
 * `node:http` underneath. Bodies stream both ways; a client that goes away aborts the request.
 *
 * @since 0.1.0
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { Readable } from "node:stream"
import type { ReadableStream as NodeReadableStream } from "node:stream/web"

/**
 * @since 0.1.0
 * @category models
 */
export type WebHandler = (request: Request) => Promise<Response>

/**
 * The request as a Fetch `Request`. `req.url` is used as it is: Express has already removed the
 * mount path from it (`app.use("/waybill", ...)`), which is what the handler's routes expect.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toRequest = (req: IncomingMessage, signal: AbortSignal): Request => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item)
  }
  const method = req.method ?? "GET"
  const hasBody = method !== "GET" && method !== "HEAD"
  return new Request(new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`), {
    method,
    headers,
    signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {})
  } as RequestInit)
}

/**
 * Writes a Fetch `Response` to a Node response, streaming its body.
 *
 * @since 0.1.0
 * @category conversions
 */
export const writeResponse = async (response: Response, res: ServerResponse): Promise<void> => {
  const headers: Record<string, string | Array<string>> = {}
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value
  })
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) headers["set-cookie"] = cookies
  res.writeHead(response.status, response.statusText, headers)
  if (response.body === null) {
    res.end()
    return
  }
  await new Promise<void>((resolve, reject) => {
    Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>)
      .on("error", reject)
      .pipe(res)
      .on("finish", resolve)
      .on("close", resolve)
      .on("error", reject)
  })
}

/**
 * The listener: `http.createServer(toNodeListener(handler))` or `app.use("/waybill",
 * toNodeListener(handler))`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toNodeListener =
  (handler: WebHandler) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    const controller = new AbortController()
    // The client went away before the whole response was written: stop the work.
    res.on("close", () => {
      if (!res.writableFinished) controller.abort()
    })
    handler(toRequest(req, controller.signal))
      .then((response) => writeResponse(response, res))
      .catch(() => {
        if (!res.headersSent) {
          res.writeHead(500, { "content-type": "application/json" })
          res.end(JSON.stringify({ code: "internal", message: "Internal server error", issues: [] }))
        } else {
          res.destroy()
        }
      })
  }
