/**
 * Raw HTTP/1.1 for the end-to-end tests: requests that Fetch would refuse to send (control
 * characters, repeated `Authorization` headers, malformed lines) and the answers read from the
 * bytes that came back.
 */
import { request as nodeRequest } from "node:http"
import { connect } from "node:net"

/** The contract's error body. */
export interface ErrorBody {
  readonly code: unknown
  readonly message: unknown
  readonly issues: unknown
}

/** What came back on a new connection to `port` after `bytes`, once the server closed it (or after `timeoutMs`). */
export const exchange = (port: number, bytes: string | Buffer, timeoutMs: number) =>
  new Promise<string>((resolve) => {
    const chunks: Array<Buffer> = []
    const socket = connect(port, "127.0.0.1", () =>
      socket.write(typeof bytes === "string" ? Buffer.from(bytes, "latin1") : bytes)
    )
    socket.setTimeout(timeoutMs, () => socket.destroy())
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("error", () => {})
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")))
  })

/**
 * The first answer in the bytes received: its status (0 for none), headers (lower-case names), body
 * (by `Content-Length`, or chunked, as UTF-8) and the error body it carries, `undefined` when the
 * body has not the contract's shape (exactly `code`, `message` and `issues`).
 */
export const parseAnswer = (received: string) => {
  const end = received.indexOf("\r\n\r\n")
  const [statusLine = "", ...headerLines] = (end === -1 ? received : received.slice(0, end)).split("\r\n")
  const headers: Record<string, string> = Object.fromEntries(
    headerLines.map((line) => [
      line.slice(0, line.indexOf(":")).toLowerCase(),
      line.slice(line.indexOf(":") + 1).trim()
    ])
  )
  let body = end === -1 ? "" : received.slice(end + 4)
  if (headers["content-length"] !== undefined) body = body.slice(0, Number(headers["content-length"]))
  else if (headers["transfer-encoding"] === "chunked") {
    let decoded = ""
    for (let at = 0; ; ) {
      const lineEnd = body.indexOf("\r\n", at)
      const size = Number.parseInt(body.slice(at, lineEnd), 16)
      if (lineEnd === -1 || !(size > 0)) break
      decoded += body.slice(lineEnd + 2, lineEnd + 2 + size)
      at = lineEnd + 4 + size
    }
    body = decoded
  }
  const text = Buffer.from(body, "latin1").toString("utf8")
  let error: ErrorBody | undefined
  try {
    const parsed = JSON.parse(text)
    if (Object.keys(parsed).sort().join(",") === "code,issues,message") error = parsed
  } catch {
    error = undefined
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1] ?? 0), headers, body: text, error }
}

/** A request with repeated `Authorization` headers, one line each, as Node's client sends them. */
export const withHeaderLines = (url: string, method: string, authorization: ReadonlyArray<string>, body?: string) =>
  new Promise<{ readonly status: number; readonly text: string }>((resolve, reject) => {
    const request = nodeRequest(
      url,
      {
        method,
        headers: {
          Authorization: [...authorization],
          ...(body === undefined ? {} : { "content-type": "application/json" })
        }
      },
      (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (text += chunk))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }))
      }
    )
    request.on("error", reject)
    request.end(body)
  })
