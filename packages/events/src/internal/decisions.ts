/** The "Decisions" section of docs/events.md: what the contract leaves open, decided here. */
export const decisions: ReadonlyArray<string> = [
  "**Required entity fields.** Every entity has a required string `id` (contract §1: ids are strings). Beyond " +
    "it only what the spec marks as essential is required: `Tour.status`; `TransportDraft.origin` and `.status`; " +
    "on every action record `id`, `payload.type`, `createdAt`, `createdAtMilliseconds`; " +
    "`CalloutWithStats.suggestedBid` (present, the one stat every auction reveals); a write-off's `writtenOffBy`. " +
    "Every other field is optional, and every entity is open: fields the spec does not show pass through " +
    "unchanged.",
  "**Open where the spec shows no type (contract §5).** Where the seed names a field but shows no type, any JSON " +
    "value is accepted: on `Task` `kind`, `assignee`, `origin`, its timestamps (`createdAt`, `updatedAt`, " +
    '`dueAt`, `closedAt`: the seed says "timestamps" without names), `templateId`, `templateKey` and `status` ' +
    "(the seed names no task status); a leg's and a load's `status`, a load's `returnShipmentId`, a write-off's " +
    "`note`, `writtenOffBy`, `writtenOffAt`, `disposedBy`; `Shipment.status`; `DocumentLink.targetEntityId`; a " +
    "callout's `currentBid`, `bidCount`, `isWinning`, `suggestedBid`. So a host whose tasks have an assignee " +
    'object (`{ type: "operator-user", id }`) publishes them as they are. Still validated, on the seed\'s or the ' +
    "contract's authority: ids (strings), `properties` (an object keyed by property id), `referencedEntity` " +
    "(`orn`, `type`, `id`, strings), a completed task's `outcome.formOutput` (an object keyed by form element " +
    "id), `templateKey` only with `templateId`, load `Returned`/`Perished` rules, write-off `reason` " +
    "(`Lost`/`Damaged`), `disposedAt` (epoch seconds, contract §1) with `disposedBy`, mailbox statuses " +
    "(`active`/`inactive`), `targetEntityType` (the seed shows `task`), action records' timestamps (contract " +
    "§1), and what contracts §2 and §3 define for drafts, draft actions and tours. Filters still offer every " +
    "opened field, as the type it usually has (`task.status` as a select of the statuses the producer knows, " +
    "timestamps as dates): filters compare strictly, so another type simply does not match.",
  "**Actors on published events.** A `TransportDraftAction`'s `actor` is any `{ type, id }` with a non-empty " +
    "`type` and a string `id` (contract §5: a host records its own users' actions; the service's own use " +
    "`api-key` and `system`). `action.actor.type` is therefore a text filter field, no longer a select of the two.",
  "**Exact top-level keys.** A payload has exactly its event's keys: an unknown top-level key is an issue " +
    "(`is unexpected`). `referencedEntity` is closed too (`orn`, `type`, `id`), so a task event can never embed " +
    "the referenced entity.",
  "**Decoded payloads are the input.** The payload schemas only check, so `decodePayload` returns a valid input " +
    "unchanged (same object). A `__proto__` key from `JSON.parse` therefore stays an own data property and is " +
    "delivered as sent; redaction builds its copies with own data properties too, never through a prototype.",
  "**Status snapshot.** `oldStatus` and `newStatus` of `tour-action-created` come together or not at all.",
  "**Leg loads.** A leg carries `loads[]`; a load has `id`, `status` (any value; `Returned` and `Perished` " +
    "are the terminal values the spec names), `returnShipmentId?` and `writeOff?`. `writeOff` is present exactly " +
    "when `status` is `Perished`: `{ reason: Lost|Damaged, note?, writtenOffBy, writtenOffAt?, disposedAt?, " +
    "disposedBy? }` (the field names are ours; the seed names the facts). `disposedAt` (epoch seconds) and " +
    "`disposedBy` come together, only on `Damaged`; a `Lost` write-off carrying either is refused.",
  "**Tasks.** `templateKey` requires `templateId`. The task of `task-completed` requires `outcome.formOutput`; " +
    "the producer gives a task without a form an empty `formOutput`. The producer's rules read closing from " +
    "`status` values `completed`, `skipped`, `cancelled` (`Task.TaskStatus`); any other value is open.",
  "**Other typed fields.** `Tour` also types the generated-tour fields of contract §3 (`name`, `draftId`, " +
    "`triggerAt`, `triggerDate`, `timezone`, `vehicleClass`, `vehicleClassReason`, `stops`, `createdAt`); " +
    "`TransportDraft` and `TransportDraftAction` follow contract §2; `Mailbox` has an optional `status` " +
    "(`active|inactive`), `DocumentLink` an optional `targetEntityType`. Every whole entity may carry `properties` " +
    "(custom properties keyed by property id).",
  "**Filter-field typing.** Strings are `text`, numbers `number`, booleans `checkbox`, unions of string literals " +
    "`select` (option id and label are the value); epoch timestamps (seconds or milliseconds) and `YYYY-MM-DD` days " +
    "are `date`. Arrays and maps are never traversed, so list events and `callouts` offer nothing. Every field " +
    "offers `is_set`/`is_not_set` except those under `order-created`'s optional `tour`. A whole entity's " +
    "`properties` map is replaced by one field per property definition; the reduced tour of " +
    "`callout-action-created` counts as whole for this (spec: `tour.properties.<propertyId>`).",
  "**Property definitions.** `entity` is one of the entity names, spelled like their payload keys (`tour`, " +
    "`shipperTeam`, …; `commentReaction` is delivered under `reaction`). A property id is one path segment: " +
    "non-empty, no dots or whitespace, never `__proto__`, `constructor` or `prototype`. `select` and " +
    "`multiselect` require `options` (unique ids), other types refuse them; an `(entity, id)` pair appears once. " +
    "Multiselect options are listed too, though the field is not selectable.",
  "**Redaction depth.** In a tour action, every `carrierBooking` anywhere in the action (own properties, arrays " +
    "included) is reduced to `provider`, `carrierId`, `carrierBookingId`, `trackingRef` (those present; nothing " +
    "is added); an array of bookings is reduced element by element; `null` stays; a scalar is dropped. Every " +
    "`providerPayload` anywhere in the action is removed. `payload.preAssignCarrierId` is removed on assign " +
    "actions: verbs `assign`, `assign-…`, `assign_…`, `assignX…` (never `unassign`, `reassign`). The same " +
    "redaction applies to `tour-rebuilt`, which carries the same tour action record.",
  "**Callout enrichment.** `callouts` keeps the cluster's order. Stat fields a stored callout already carried are " +
    "replaced by the computed stats; for secret auctions `currentBid`, `bidCount`, `isWinning` are removed and " +
    "only `suggestedBid` is set. The producer sets `action.createdAt` to `createdAtMilliseconds`.",
  "**Task events.** Closing is read from the task's status. Closed statuses are terminal: `taskEvents` refuses " +
    "(`TaskTransitionError`) any status change of a closed task, so no second closing event can be raised; a task " +
    "created already closed raises `task-created` and its closing event.",
  "**Envelope.** `id` must start with `evt_`, `createdAt` is non-negative integer epoch seconds, `type` a " +
    "catalogue type; `Envelope.decode` reports the envelope's and the payload's issues together " +
    "(`payload.tour.id`).",
  "**Refinements run last.** Cross-field rules (status snapshot, Perished/writeOff, disposal pair, " +
    "`templateKey`) are schema refinements; Effect checks a refinement once the object under it has the right " +
    "shape, so these issues appear together with each other but after the shape issues are fixed.",
  "**OpenAPI.** Component names carry the prefix `Webhook` (`WebhookTour`, `WebhookTourCreatedEvent`) so they " +
    "never collide with the HTTP API's schemas. Each webhook lists `X-Delivery-Id`, `X-Event-Id`, " +
    "`X-Delivery-Attempt`, the three HMAC headers (optional) and `X-Event-Type` (a `const`); `Authorization` is " +
    "expressed as the security schemes `WebhookBasic`, `WebhookBearer`, `WebhookHmac`, because OpenAPI ignores " +
    "an `Authorization` header parameter. Responses are `2XX` and `default`. Effect's `$id: /schemas/…` markers " +
    "are dropped, since a repeated `$id` is ambiguous to JSON Schema validators.",
  "**Deduplicator.** `@waybill/signing`'s `Deduplicator.make({ capacity })` remembers the most recently seen delivery ids (least " +
    "recently seen evicted first); `seen(id)` checks and records at once; `forget(id)` lets the retry through " +
    "when handling the first attempt failed.",
  "**Nesting depth.** A payload nests at most `EventOutbox.maxPayloadDepth` (128) levels of objects and arrays, " +
    "twice the contract's input limit of 64: events embed request bodies a few levels down (a draft's " +
    "`transport`, level 2 of `POST /drafts`, is level 4 of a `transport-drafts-created` payload), so the " +
    "input limit cannot apply to them, yet 128 is far from any stack limit. `decodePayload` answers a deeper " +
    "payload with one issue at the path where the limit is crossed, and `Envelope.decode` a body deeper than " +
    "129, before any schema decoder quotes (recursively) a refused value; `recordAll` refuses to record a " +
    "deeper payload (the batch dies with a `ValidationError` naming the path: a producer's defect, since every " +
    "input is bounded first), so the service never sends a body its own consumer helpers refuse; " +
    "`redactTourAction` throws that error for such an action instead of recursing into it.",
  "**Outbox port.** `EventOutbox.NewEvent.type` is narrowed to `EventType`; `RecordedEvent.type` stays a string " +
    "so storage adapters need not re-check rows. `Producer.event(type, payload)` types the payload by event."
]
