import * as Pg from "pg"

/** Statements a connection keeps prepared at most; further ones are parsed on every run. */
export const MAX_PREPARED_PER_CONNECTION = 200

/**
 * A `pg` client that runs every parameterised statement as a named query, so PostgreSQL plans a
 * text once per connection. See docs/decisions/0018.
 */
export class PreparingClient extends Pg.Client {
  readonly #names = new Map<string, string>()

  // `pg` declares `query` as a set of overloads; one rest signature stands for all of them.
  // biome-ignore lint/suspicious/noExplicitAny: the overloads' own parameter and return types
  override query(...args: Array<any>): any {
    const [text, values, callback] = args
    if (typeof text === "string" && Array.isArray(values) && values.length > 0) {
      const name = this.#nameOf(text)
      if (name !== undefined) return super.query({ name, text, values }, callback)
    }
    return (super.query as (...args: Array<unknown>) => unknown)(...args)
  }

  #nameOf(text: string): string | undefined {
    let name = this.#names.get(text)
    if (name === undefined && this.#names.size < MAX_PREPARED_PER_CONNECTION) {
      name = `waybill_${this.#names.size + 1}`
      this.#names.set(text, name)
    }
    return name
  }
}
