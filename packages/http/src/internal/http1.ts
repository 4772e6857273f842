/**
 * A small HTTP/1.1 client for webhook attempts: one POST at a time per connection, connections
 * kept alive per origin, the response read only as far as the sender needs it. It exists because
 * a delivery's cost is mostly the client's: `node:http` spends ~90 µs of CPU per request on
 * objects, events and header validation this use never needs; this spends about a third of it.
 *
 * What it takes: a request head built once per attempt (validated here, as `node:http` would),
 * the body, and how many body bytes to read at most. What it answers: the status code, once the
 * response is complete or `maxBytes` of its body were read (then the connection is dropped),
 * or an error carrying Node's code for the classification. A connection is reused only after a
 * response whose end was known (`Content-Length` or chunked) and that did not ask to close; a
 * request whose reused connection the receiver had closed meanwhile (reset before any answer) is
 * sent once more on a fresh connection.
 */
import * as net from "node:net"
import * as tls from "node:tls"

/** Where requests go, and how to connect there. */
export interface Origin {
  /** `secure|host|port`: connections are pooled per key. */
  readonly key: string
  readonly secure: boolean
  readonly host: string
  readonly port: number
  /** SNI name (never an IP literal). */
  readonly servername: string | undefined
  readonly lookup: net.LookupFunction | undefined
  /** For https: the trusted authorities, built once. */
  readonly secureContext: tls.SecureContext | undefined
}

/** What an exchange ended with. */
export type Result =
  | { readonly _tag: "Response"; readonly statusCode: number }
  | { readonly _tag: "Error"; readonly error: Error & { code?: string }; readonly statusCode: number | undefined }

const MAX_HEAD_BYTES = 16 * 1024
const CRLF2 = Buffer.from("\r\n\r\n")
const CRLF = Buffer.from("\r\n")
// Field values a request may carry, as `node:http` allows them: tab, space, visible ASCII and
// Latin-1 (sent as single bytes); no CR, LF or other controls.
const SAFE_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/
const LATIN1 = /[\x80-\xff]/
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/**
 * The request head (request line and fields, ending in the blank line); throws on a field that
 * may not be sent, as `node:http` does.
 */
export const requestHead = (
  path: string,
  hostHeader: string,
  headers: Readonly<Record<string, string>>,
  contentLength: number
): string => {
  let head = `POST ${path} HTTP/1.1\r\nHost: ${hostHeader}\r\n`
  for (const name in headers) {
    const value = headers[name]!
    if (!TOKEN.test(name)) throw new Error(`Invalid header name ${JSON.stringify(name.slice(0, 40))}`)
    if (!SAFE_VALUE.test(value)) throw new Error(`Invalid character in header ${name}`)
    head += `${name}: ${value}\r\n`
  }
  return `${head}Content-Length: ${contentLength}\r\n\r\n`
}

enum Framing {
  Length,
  Chunked,
  UntilClose
}

enum State {
  Head,
  Body,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  Done
}

class HttpParseError extends Error {
  readonly code = "HPE_WAYBILL_INVALID"
}

interface Exchange {
  readonly maxBytes: number
  readonly callback: (result: Result) => void
  statusCode: number | undefined
}

// One connection and the parser of the response in flight on it.
class Connection {
  exchange: Exchange | undefined
  reusable = false
  private state = State.Head
  private pending: Buffer | undefined
  private framing = Framing.UntilClose
  private remaining = 0
  private read = 0
  private idleTimer: ReturnType<typeof setTimeout> | undefined
  // Closed after this long unused, before a receiver's common 5 s keep-alive timeout; lowered
  // to a second before the timeout a receiver announces.
  private idleMs = 4_000

  constructor(
    readonly socket: net.Socket,
    private readonly release: (connection: Connection) => void,
    private readonly forget: (connection: Connection) => void
  ) {
    socket.on("data", (chunk: Buffer) => this.onData(chunk))
    socket.on("error", (error: Error) => this.onClose(error))
    socket.on("close", () => this.onClose(undefined))
  }

  send(head: string, body: string, exchange: Exchange) {
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer)
    this.exchange = exchange
    this.state = State.Head
    this.read = 0
    this.reusable = false
    if (!LATIN1.test(head)) this.socket.write(head + body, "utf8")
    else {
      // A Latin-1 field value: the head goes as single bytes, the body as UTF-8.
      this.socket.cork()
      this.socket.write(head, "latin1")
      this.socket.write(body, "utf8")
      this.socket.uncork()
    }
  }

  // Back in the pool: closed after `idleMs` unused, before the server's own keep-alive timeout.
  park() {
    this.idleTimer = setTimeout(() => this.socket.destroy(), this.idleMs)
    this.idleTimer.unref()
  }

  abort() {
    this.exchange = undefined
    this.socket.destroy()
  }

  private finish(result: Result, reusable: boolean) {
    const exchange = this.exchange
    this.exchange = undefined
    this.state = State.Done
    if (reusable && this.pending === undefined) this.release(this)
    else this.socket.destroy()
    exchange?.callback(result)
  }

  private onClose(error: Error | undefined) {
    this.forget(this)
    const exchange = this.exchange
    if (exchange === undefined) return
    if (this.state === State.Body && this.framing === Framing.UntilClose && exchange.statusCode !== undefined) {
      return this.finish({ _tag: "Response", statusCode: exchange.statusCode }, false)
    }
    const failure: Error & { code?: string } =
      error ?? Object.assign(new Error("The connection closed before the response ended"), { code: "ECONNRESET" })
    this.finish({ _tag: "Error", error: failure, statusCode: exchange.statusCode }, false)
  }

  private fail(message: string) {
    const exchange = this.exchange
    this.finish({ _tag: "Error", error: new HttpParseError(message), statusCode: exchange?.statusCode }, false)
  }

  private onData(chunk: Buffer) {
    const exchange = this.exchange
    if (exchange === undefined || this.state === State.Done) {
      // Bytes nobody asked for: the connection can no longer be trusted.
      this.pending = chunk
      this.socket.destroy()
      return
    }
    const data = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk])
    this.pending = undefined
    let offset = 0
    while (this.exchange !== undefined) {
      switch (this.state) {
        case State.Head: {
          const end = data.indexOf(CRLF2, offset)
          if (end < 0) {
            if (data.length - offset > MAX_HEAD_BYTES) return this.fail("The response head is too large")
            this.pending = data.subarray(offset)
            return
          }
          const head = data.toString("latin1", offset, end)
          offset = end + 4
          if (!this.onHead(head, exchange)) return
          continue
        }
        case State.Body: {
          const available = data.length - offset
          if (this.framing === Framing.Length) {
            const take = Math.min(this.remaining, available)
            this.remaining -= take
            offset += take
            if (this.countBody(take, exchange)) return
            if (this.remaining === 0) return this.complete(exchange, data.length - offset)
          } else {
            offset = data.length
            if (this.countBody(available, exchange)) return
          }
          return
        }
        case State.ChunkSize: {
          const end = data.indexOf(CRLF, offset)
          if (end < 0) return this.keep(data, offset, "chunk size")
          const line = data.toString("latin1", offset, end)
          offset = end + 2
          const size = Number.parseInt(line.split(";", 1)[0]!.trim(), 16)
          if (!Number.isSafeInteger(size) || size < 0 || !/^[0-9a-fA-F]+/.test(line.trim())) {
            return this.fail("Invalid chunk size in the response")
          }
          this.remaining = size
          this.state = size === 0 ? State.Trailers : State.ChunkData
          continue
        }
        case State.ChunkData: {
          const take = Math.min(this.remaining, data.length - offset)
          this.remaining -= take
          offset += take
          if (this.countBody(take, exchange)) return
          if (this.remaining > 0) return
          this.state = State.ChunkDataEnd
          continue
        }
        case State.ChunkDataEnd: {
          if (data.length - offset < 2) return this.keep(data, offset, "chunk")
          if (data[offset] !== 13 || data[offset + 1] !== 10) return this.fail("Invalid chunk ending in the response")
          offset += 2
          this.state = State.ChunkSize
          continue
        }
        case State.Trailers: {
          const end = data.indexOf(CRLF, offset)
          if (end < 0) return this.keep(data, offset, "trailers")
          const empty = end === offset
          offset = end + 2
          if (empty) return this.complete(exchange, data.length - offset)
          continue
        }
        default:
          return
      }
    }
  }

  // Keeps an incomplete line for the next chunk, within bounds.
  private keep(data: Buffer, offset: number, what: string) {
    if (data.length - offset > MAX_HEAD_BYTES) return this.fail(`The response ${what} is too large`)
    this.pending = data.subarray(offset)
  }

  // Counts body bytes; at `maxBytes` the answer is in and the connection is dropped.
  private countBody(bytes: number, exchange: Exchange): boolean {
    this.read += bytes
    if (this.read < exchange.maxBytes) return false
    this.finish({ _tag: "Response", statusCode: exchange.statusCode! }, false)
    return true
  }

  private complete(exchange: Exchange, extra: number) {
    // More bytes than the response: nothing the next request could trust.
    this.finish({ _tag: "Response", statusCode: exchange.statusCode! }, this.reusable && extra === 0)
  }

  // Reads a response head; false when the exchange ended with it.
  private onHead(head: string, exchange: Exchange): boolean {
    const lines = head.split("\r\n")
    const status = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(lines[0]!)
    if (status === null) {
      this.fail("The answer is not an HTTP/1.x response")
      return false
    }
    const statusCode = Number(status[2])
    // Informational answers (100 Continue, 103 Early Hints) precede the real one.
    if (statusCode >= 100 && statusCode < 200 && statusCode !== 101) return true
    let length: number | undefined
    let chunked = false
    let close = status[1] === "0"
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!
      const colon = line.indexOf(":")
      if (colon <= 0) {
        this.fail("Invalid header line in the response")
        return false
      }
      const name = line.slice(0, colon).trim().toLowerCase()
      const value = line
        .slice(colon + 1)
        .trim()
        .toLowerCase()
      if (name === "content-length") {
        const parsed = /^\d{1,15}$/.test(value) ? Number(value) : Number.NaN
        if (Number.isNaN(parsed) || (length !== undefined && length !== parsed)) {
          this.fail("Invalid Content-Length in the response")
          return false
        }
        length = parsed
      } else if (name === "transfer-encoding") {
        chunked = value.split(",").at(-1)!.trim() === "chunked"
        if (!chunked) close = true
      } else if (name === "connection") {
        const tokens = value.split(",").map((token) => token.trim())
        if (tokens.includes("close")) close = true
        else if (tokens.includes("keep-alive") && status[1] === "0") close = false
      } else if (name === "keep-alive") {
        // The server's idle timeout: close ours a second before it.
        const timeout = /(?:^|,)\s*timeout\s*=\s*(\d+)/.exec(value)
        if (timeout !== null) this.idleMs = Math.max(0, Math.min(this.idleMs, Number(timeout[1]) * 1000 - 1000))
      }
    }
    // A head that reads whole is an answer, whatever becomes of its body.
    exchange.statusCode = statusCode
    this.reusable = !close && statusCode !== 101
    if (statusCode === 204 || statusCode === 304) {
      this.complete(exchange, 0)
      return false
    }
    if (chunked) {
      this.framing = Framing.Chunked
      this.state = State.ChunkSize
    } else if (length !== undefined) {
      this.framing = Framing.Length
      this.remaining = length
      this.state = State.Body
      if (length === 0) {
        this.complete(exchange, 0)
        return false
      }
    } else {
      this.framing = Framing.UntilClose
      this.reusable = false
      this.state = State.Body
    }
    return true
  }
}

interface Pool {
  readonly idle: Array<Connection>
  open: number
  readonly waiting: Array<() => void>
}

/** A handle on a request in flight: `abort` drops its connection. */
export interface Pending {
  readonly abort: () => void
  /** The response's status once its head has arrived. */
  readonly statusCode: () => number | undefined
}

/**
 * Connection pools per origin; `close` destroys every connection.
 */
export const makeClient = (options: { readonly maxSocketsPerOrigin: number }) => {
  const pools = new Map<string, Pool>()
  let closed = false

  const poolOf = (key: string): Pool => {
    let pool = pools.get(key)
    if (pool === undefined) {
      pool = { idle: [], open: 0, waiting: [] }
      pools.set(key, pool)
    }
    return pool
  }

  const connect = (origin: Origin, pool: Pool): Connection => {
    pool.open++
    const socket = origin.secure
      ? tls.connect({
          host: origin.host,
          port: origin.port,
          ...(origin.servername === undefined ? {} : { servername: origin.servername }),
          ...(origin.secureContext === undefined ? {} : { secureContext: origin.secureContext }),
          ...(origin.lookup === undefined ? {} : { lookup: origin.lookup })
        })
      : net.connect({
          host: origin.host,
          port: origin.port,
          ...(origin.lookup === undefined ? {} : { lookup: origin.lookup })
        })
    socket.setNoDelay(true)
    let gone = false
    const forget = (connection: Connection) => {
      if (gone) return
      gone = true
      pool.open--
      const index = pool.idle.indexOf(connection)
      if (index >= 0) pool.idle.splice(index, 1)
      pool.waiting.shift()?.()
      // An origin with nothing open or waiting is forgotten: webhook URLs come and go.
      if (pool.open === 0 && pool.waiting.length === 0 && pools.get(origin.key) === pool) pools.delete(origin.key)
    }
    const release = (connection: Connection) => {
      if (closed) return connection.socket.destroy()
      const next = pool.waiting.shift()
      if (next !== undefined) {
        pool.idle.push(connection)
        return next()
      }
      connection.park()
      pool.idle.push(connection)
    }
    return new Connection(socket, release, forget)
  }

  /** Sends one request; `callback` is called once, unless the request is aborted first. */
  const request = (
    origin: Origin,
    head: string,
    body: string,
    maxBytes: number,
    callback: (result: Result) => void
  ): Pending => {
    let pool = poolOf(origin.key)
    let connection: Connection | undefined
    let aborted = false
    let reused = false
    let resent = false
    const exchange: Exchange = {
      maxBytes,
      statusCode: undefined,
      callback: (result) => {
        // A pooled connection the receiver closed while it sat idle (its keep-alive timeout
        // racing our request) fails before any answer: nobody answered, so the request goes
        // once more, on a fresh connection, instead of failing the attempt. A fresh connection
        // that fails so is a failure.
        if (reused && !resent && !aborted && result._tag === "Error" && result.statusCode === undefined) {
          if (result.error.code === "ECONNRESET" || result.error.code === "EPIPE") {
            resent = true
            return start(true)
          }
        }
        callback(result)
      }
    }
    const start = (fresh = false) => {
      if (aborted) return
      if (closed) {
        callback({
          _tag: "Error",
          error: Object.assign(new Error("The sender is closed"), { code: "ECONNABORTED" }),
          statusCode: undefined
        })
        return
      }
      // Looked up again: a pool left with nothing open or waiting is forgotten meanwhile.
      pool = poolOf(origin.key)
      // Most recently used first: the connection least likely to have been closed meanwhile.
      connection = fresh ? undefined : pool.idle.pop()
      reused = connection !== undefined
      if (connection === undefined) {
        if (pool.open >= options.maxSocketsPerOrigin) {
          pool.waiting.push(start)
          return
        }
        connection = connect(origin, pool)
      }
      connection.send(head, body, exchange)
    }
    start()
    return {
      abort: () => {
        aborted = true
        const index = pool.waiting.indexOf(start)
        if (index >= 0) pool.waiting.splice(index, 1)
        if (connection?.exchange === exchange) connection.abort()
      },
      statusCode: () => exchange.statusCode
    }
  }

  const close = () => {
    closed = true
    for (const pool of pools.values()) {
      for (const connection of pool.idle) connection.socket.destroy()
      pool.idle.length = 0
      pool.waiting.length = 0
    }
    pools.clear()
  }

  return { request, close }
}
