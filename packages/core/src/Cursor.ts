/**
 * Opaque list cursors: base64url text a list hands out as `nextCursor` and takes back as `cursor`.
 * A cursor that is not one of ours decodes to none (the caller answers 400).
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Id from "./Id.js"

/** Encodes a position as an opaque cursor. @since 0.1.0 */
export const encode = (text: string): string => btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")

/** The text of a cursor, or none when it is not base64url of at most 200 characters. @since 0.1.0 */
export const decode = (cursor: string): Option.Option<string> => {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return Option.none()
  try {
    return Option.some(atob(cursor.replaceAll("-", "+").replaceAll("_", "/")))
  } catch {
    return Option.none()
  }
}

/** The cursor that points after the item with this id (lists ordered by id). @since 0.1.0 */
export const afterId = (prefix: Id.Prefix, id: string): string => encode(`${prefix}:${id}`)

/** The id a cursor of `afterId` points after, or none when it is not a cursor of this kind. @since 0.1.0 */
export const idAfter = (prefix: Id.Prefix, cursor: string): Option.Option<string> =>
  Option.filter(
    Option.map(decode(cursor), (text) => (text.startsWith(`${prefix}:`) ? text.slice(prefix.length + 1) : "")),
    (id) => Id.isId(prefix, id)
  )
