import { migration } from "../internal/migration.js"

// Fan-out keeps the webhooks it matched events against while nothing about them changes
// (docs/decisions/0129): `webhook_changes.version` moves on with every statement that adds or
// deletes webhooks and every update that moves a webhook's revision (each change that matters
// moves it; a failure count does not), in the writer's transaction, by triggers. Any writer is
// seen, a previous release's processes included, and a reader that sees a version sees the
// webhooks as they were then or later. One row, updated in place.
export default migration(function* (sql) {
  yield* sql`
    CREATE TABLE webhook_changes (
      one boolean PRIMARY KEY DEFAULT true CHECK (one),
      version bigint NOT NULL
    )`
  yield* sql`INSERT INTO webhook_changes (version) VALUES (0)`
  // The migration's search_path goes with the function, so a host's connection finds the table.
  yield* sql`
    CREATE FUNCTION waybill_webhooks_changed() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      UPDATE webhook_changes SET version = version + 1;
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE TRIGGER webhooks_added_or_deleted AFTER INSERT OR DELETE OR TRUNCATE ON webhooks
    FOR EACH STATEMENT EXECUTE FUNCTION waybill_webhooks_changed()`
  yield* sql`
    CREATE TRIGGER webhooks_revised AFTER UPDATE ON webhooks
    FOR EACH ROW WHEN (OLD.revision IS DISTINCT FROM NEW.revision) EXECUTE FUNCTION waybill_webhooks_changed()`
})
