/**
 * How a failed request failed: the error classes of the delivery log, read from the codes Node,
 * undici and fetch put on their errors (and their causes), and a description without secrets.
 */
import type { ErrorClass } from "@waybill/webhooks/Delivery"

const dnsCodes = new Set([
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "EAI_NODATA",
  "EAI_NONAME",
  "EAI_ADDRFAMILY",
  "ENODATA",
  "ESERVFAIL",
  "ENOTIMP",
  "EREFUSED",
  "EBADNAME",
  "EBADRESP",
  "ECONNREFUSED_DNS"
])

const tlsCodes = new Set([
  "EPROTO",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_SIGNATURE_FAILURE",
  "HOSTNAME_MISMATCH",
  "INVALID_CA",
  "PATH_LENGTH_EXCEEDED"
])

// undici's deadlines: its connect timeout (see `make`); those for headers and body are off.
const timeoutCodes = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"])

// A request undici would not send (nothing was sent), or an answer it could not read as HTTP.
export const requestCodes = new Set([
  "UND_ERR_INVALID_ARG",
  "UND_ERR_NOT_SUPPORTED",
  "UND_ERR_REQ_CONTENT_LENGTH_MISMATCH"
])
const responseCodes = new Set([
  "UND_ERR_RES_CONTENT_LENGTH_MISMATCH",
  "UND_ERR_HEADERS_OVERFLOW",
  "UND_ERR_RES_EXCEEDED_MAX_SIZE"
])

/** Marks the error a guarded lookup raises for a refused address. */
export const SSRF_CODE = "ERR_WAYBILL_SSRF_REFUSED"

/** An error as Node and undici raise them: a code, a syscall, the errors of an aggregate, a cause. */
export interface CodedError extends Error {
  code?: string
  syscall?: string
  errors?: ReadonlyArray<CodedError>
  cause?: unknown
}

export const codeOf = (error: CodedError): string | undefined => error.code ?? error.errors?.[0]?.code

const classOf = (error: CodedError): ErrorClass | undefined => {
  const code = codeOf(error)
  if (code === SSRF_CODE) return "ssrf"
  if (error.syscall === "getaddrinfo" || error.syscall === "queryA") return "dns"
  if (code === undefined) return error.name === "HTTPParserError" ? "http" : undefined
  if (dnsCodes.has(code)) return "dns"
  if (tlsCodes.has(code) || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_") || code.startsWith("CERT_")) {
    return "tls"
  }
  if (code.startsWith("HPE_") || requestCodes.has(code) || responseCodes.has(code)) return "http"
  if (timeoutCodes.has(code)) return "timeout"
  // undici's socket error: a close, or an answer none was due (an unasked `100 Continue`, an upgrade).
  if (code === "UND_ERR_SOCKET") return /^bad (response|upgrade)$/.test(error.message) ? "http" : undefined
  return undefined
}

/** The error class of a request error, looked for through `cause`; `connect` when nothing says more. */
export const classify = (error: CodedError): ErrorClass => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    const found = classOf(current as CodedError)
    if (found !== undefined) return found
    current = (current as CodedError).cause
  }
  return "connect"
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/** What a failed request says, without its headers' values or its body. */
export const describeError = (error: CodedError, headers: Readonly<Record<string, string>>): string => {
  const code = codeOf(error)
  if (code !== undefined && requestCodes.has(code)) {
    // undici does not say which name it refused; the name is no secret, its value may be.
    const name =
      error.message === "invalid header key" ? Object.keys(headers).find((key) => !TOKEN.test(key)) : undefined
    return `The request could not be built: ${name === undefined ? error.message : `invalid header name ${JSON.stringify(name.slice(0, 40))}`}`
  }
  return error.message
}
