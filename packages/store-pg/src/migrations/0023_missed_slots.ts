import { migration } from "../internal/migration.js"

// A rate-limited delivery's claims given back for starting late since its last record (contract
// §8, rate limit; docs/decisions/0130): its next claim holds more slots, so its attempt may start
// later and its webhook still gets no more than its limit in any second. A constant default: no
// rewrite, so it holds publishing for no longer than its lock.
export default migration(function* (sql) {
  yield* sql`ALTER TABLE deliveries ADD COLUMN missed_slots integer NOT NULL DEFAULT 0`
})
