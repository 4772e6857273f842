import * as Pg from "pg"

/** Statements a connection keeps prepared at most; further ones are parsed on every run. */
export const MAX_PREPARED_PER_CONNECTION = 200

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown

/**
 * A `pg` client that runs every parameterised statement as a named prepared statement of its
 * connection: PostgreSQL parses and plans a statement's text once per connection instead of on
 * every run (a third of the database's CPU per event under load). `@effect/sql-pg` sends its
 * statements as unnamed ones; this is the client its pool is given.
 *
 * The texts are the queries of this package, a fixed set; the bound only keeps a connection
 * from growing without limit if a caller builds texts that vary (an `IN` list, a multi-row
 * `VALUES`). Statements without parameters (`BEGIN`, `COMMIT`, migrations) go as they are.
 */
export function PreparingClient(config?: string | Pg.ClientConfig): Pg.Client {
  const client = new Pg.Client(config)
  const names = new Map<string, string>()
  const query = (client.query as Query).bind(client)
  const prepared: Query = (config, values, callback) => {
    if (typeof config === "string" && Array.isArray(values) && values.length > 0) {
      let name = names.get(config)
      if (name === undefined && names.size < MAX_PREPARED_PER_CONNECTION) {
        name = `waybill_${names.size + 1}`
        names.set(config, name)
      }
      if (name !== undefined) return query({ name, text: config, values }, callback)
    }
    return query(config, values, callback)
  }
  client.query = prepared as Pg.Client["query"]
  return client
}
