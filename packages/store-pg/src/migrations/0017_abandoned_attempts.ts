import { migration } from "../internal/migration.js"

// Attempts a stop cut short (contract §8, "Shutdown"): counted so that the next attempt's
// `X-Delivery-Attempt` never repeats a number. A column with a constant default is added without
// rewriting the table, so it holds publishing for no longer than its lock.
export default migration(function* (sql) {
  yield* sql`ALTER TABLE deliveries ADD COLUMN abandoned_attempts integer NOT NULL DEFAULT 0`
})
