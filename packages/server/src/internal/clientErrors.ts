/**
 * The answers a Node HTTP server gives before the application sees a request (a parse error, a
 * request deadline, headers too large), with the API's error body instead of Node's bare status.
 */
import * as NodeHttp from "node:http"
import type { Socket } from "node:net"
import * as Issue from "@waybill/core/Issue"

interface Refusal {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly issues: ReadonlyArray<Issue.Issue>
}

type ClientError = Error & { readonly code?: unknown; readonly reason?: unknown; readonly rawPacket?: unknown }

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
// Control characters other than horizontal tab, which HTTP allows inside a field value.
const hasControl = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return true
  }
  return false
}
const MAX_ISSUES = 10

// The header lines of the bytes received so far that HTTP does not allow, by name only: a value
// may be a secret (`Authorization`), so it is never quoted back.
const headerIssues = (raw: unknown): ReadonlyArray<Issue.Issue> => {
  if (!Buffer.isBuffer(raw)) return []
  const text = raw.toString("latin1")
  const end = text.indexOf("\r\n\r\n")
  const lines = (end === -1 ? text : text.slice(0, end)).split("\r\n").slice(1)
  const issues: Array<Issue.Issue> = []
  for (const line of lines) {
    if (issues.length === MAX_ISSUES) break
    const colon = line.indexOf(":")
    const name = colon === -1 ? line : line.slice(0, colon)
    if (colon === -1 || !TOKEN.test(name)) {
      issues.push(Issue.make("(header name)", "is not a valid header line (name: value)"))
    } else if (hasControl(line.slice(colon + 1))) {
      issues.push(Issue.make(name, "must not contain control characters"))
    }
  }
  return issues
}

const refusalOf = (error: ClientError): Refusal => {
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        status: 408,
        code: "request_timeout",
        message: "The request's headers and body did not arrive within the request deadline; the connection is closed",
        issues: []
      }
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 431,
        code: "request_header_fields_too_large",
        message: `The request's headers are larger than ${NodeHttp.maxHeaderSize} bytes`,
        issues: []
      }
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return {
        status: 413,
        code: "payload_too_large",
        message: "The request's chunk extensions are too large",
        issues: []
      }
    case "HPE_INVALID_VERSION":
      return {
        status: 505,
        code: "http_version_not_supported",
        message: "The request's HTTP version is not supported: use HTTP/1.1",
        issues: []
      }
    default: {
      const reason = typeof error.reason === "string" && error.reason !== "" ? `: ${error.reason.toLowerCase()}` : ""
      return {
        status: 400,
        code: "bad_request",
        message: `The request is not valid HTTP/1.1${reason}`,
        issues: headerIssues(error.rawPacket)
      }
    }
  }
}

/** The raw HTTP/1.1 answer of a refusal: the contract's error body, and the connection closed. */
const answerOf = (error: ClientError): string => {
  const refusal = refusalOf(error)
  const body = JSON.stringify({ code: refusal.code, message: refusal.message, issues: refusal.issues })
  return [
    `HTTP/1.1 ${refusal.status} ${NodeHttp.STATUS_CODES[refusal.status] ?? "Error"}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
    "",
    body
  ].join("\r\n")
}

/**
 * Installs the answers on `server`. A refusal is written only where Node would write its own:
 * on a writable socket whose last response, if any, has not started (a response under way is
 * never interrupted); the socket is closed once it is written.
 */
export const install = <S extends NodeHttp.Server>(server: S): S => {
  const responses = new WeakMap<Socket, NodeHttp.ServerResponse>()
  server.on("request", (request: NodeHttp.IncomingMessage, response: NodeHttp.ServerResponse) => {
    responses.set(request.socket, response)
  })
  server.on("clientError", (error: ClientError, socket: Socket) => {
    const response = responses.get(socket)
    const underWay = response?.headersSent === true && !response.writableFinished
    if (error.code === "ECONNRESET" || !socket.writable || underWay) {
      socket.destroy()
      return
    }
    socket.end(answerOf(error), () => socket.destroy())
  })
  return server
}
