/**
 * What the console's bundle gets for `node:crypto`. The API definition it shares with the
 * server reaches modules that import it at load time (ids, the secret box, HMAC); in the page,
 * ids take their randomness from Web Crypto and nothing else is ever called. A call to anything
 * else is a bug, and says so.
 */
const unavailable =
  (name: string) =>
  (..._: ReadonlyArray<unknown>): never => {
    throw new Error(`node:crypto ${name} is not available in the console`)
  }

export const randomFillSync = <T extends ArrayBufferView>(buffer: T): T => {
  globalThis.crypto.getRandomValues(buffer as unknown as Uint8Array<ArrayBuffer>)
  return buffer
}
export const createCipheriv = unavailable("createCipheriv")
export const createDecipheriv = unavailable("createDecipheriv")
export const createSecretKey = unavailable("createSecretKey")
export const createHash = unavailable("createHash")
export const createHmac = unavailable("createHmac")
export const randomBytes = unavailable("randomBytes")
export const timingSafeEqual = unavailable("timingSafeEqual")
