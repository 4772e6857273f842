/**
 * The spec's event table, written out again independently of the catalogue (spec "Event types
 * and payloads"), plus sample values to build a valid payload for every event type.
 */

/** Event type → payload keys (`?` marks optional) → entity name (`[]` marks a list). */
export const specTable: ReadonlyArray<readonly [string, Readonly<Record<string, string>>]> = [
  ["tour-created", { tour: "Tour" }],
  ["tour-assigned", { tour: "Tour" }],
  ["tour-unassigned-carrier", { tour: "Tour" }],
  ["tour-started", { tour: "Tour" }],
  ["tour-arrived-at-stop", { tour: "Tour" }],
  ["tour-departed-from-stop", { tour: "Tour" }],
  ["tour-proof-attached", { tour: "Tour" }],
  ["tour-waiting-for-review", { tour: "Tour" }],
  ["tour-completed", { tour: "Tour" }],
  ["tour-cancelled", { tour: "Tour" }],
  ["tour-deleted", { tourId: "String" }],
  ["tour-edited", { tour: "Tour" }],
  ["tour-rebuilt", { tour: "Tour", action: "TourAction" }],
  ["tour-action-created", { tour: "Tour", action: "TourAction", "oldStatus?": "String", "newStatus?": "String" }],
  ["shipments-created", { shipments: "Shipment[]" }],
  ["shipment-deleted", { shipmentId: "String" }],
  ["shipment-updated", { shipment: "Shipment" }],
  ["order-created", { order: "Order", "tour?": "Tour", "documentLinks?": "DocumentLink[]" }],
  ["order-updated", { order: "Order" }],
  ["operator-user-invite-created", { operatorUserInvite: "OperatorUserInvite" }],
  ["operator-user-created", { operatorUser: "OperatorUser" }],
  ["shipper-created", { shipper: "Shipper" }],
  ["shipper-updated", { shipper: "Shipper", action: "ShipperAction" }],
  ["shipper-team-created", { shipperTeam: "ShipperTeam" }],
  ["shipper-team-updated", { shipperTeam: "ShipperTeam", action: "ShipperTeamAction" }],
  ["shipper-user-created", { shipperUser: "ShipperUser" }],
  ["shipper-user-updated", { shipperUser: "ShipperUser", action: "ShipperUserAction" }],
  ["shipper-address-created", { shipperAddress: "ShipperAddress" }],
  ["mailbox-created", { mailbox: "Mailbox" }],
  ["mailbox-mail-received", { mailboxId: "String" }],
  ["mailbox-status-changed", { mailboxId: "String", newStatus: "MailboxStatus", oldStatus: "MailboxStatus" }],
  ["decode-job-result", { transportDraft: "TransportDraft" }],
  ["callout-action-created", { callouts: "CalloutWithStats[]", action: "CalloutAction", "tour?": "CalloutTour" }],
  ["sequence-invocation-created", { sequenceInvocation: "SequenceInvocation" }],
  ["sequence-invocation-action-created", { sequenceInvocationAction: "SequenceInvocationAction" }],
  ["transport-drafts-created", { transportDrafts: "TransportDraft[]" }],
  ["transport-drafts-deleted", { transportDraftIds: "String[]" }],
  ["transport-draft-action-created", { transportDraft: "TransportDraft", action: "TransportDraftAction" }],
  ["carrier-action-created", { carrier: "Carrier", action: "CarrierAction" }],
  ["carrier-team-created", { carrierTeam: "CarrierTeam" }],
  ["carrier-team-action-created", { carrierTeam: "CarrierTeam", action: "CarrierTeamAction" }],
  ["carrier-user-created", { carrierUser: "CarrierUser" }],
  ["carrier-user-action-created", { carrierUser: "CarrierUser", action: "CarrierUserAction" }],
  ["document-link-action-created", { documentLink: "DocumentLink", action: "DocumentLinkAction" }],
  ["leg-created", { leg: "Leg" }],
  ["leg-action-created", { leg: "Leg", action: "LegAction" }],
  ["leg-deleted", { leg: "Leg" }],
  ["transport-draft-recurring-activated", { transportDraft: "TransportDraft" }],
  ["transport-draft-recurring-paused", { transportDraft: "TransportDraft" }],
  ["transport-draft-recurring-resumed", { transportDraft: "TransportDraft" }],
  ["transport-draft-recurring-ended", { transportDraft: "TransportDraft" }],
  ["comment-created", { comment: "Comment" }],
  ["comment-edited", { comment: "Comment" }],
  ["comment-deleted", { comment: "Comment" }],
  ["comment-reaction-added", { comment: "Comment", reaction: "CommentReaction" }],
  ["comment-reaction-removed", { comment: "Comment", reaction: "CommentReaction" }],
  ["task-created", { task: "Task", referencedEntity: "ReferencedEntity" }],
  ["task-completed", { task: "CompletedTask", referencedEntity: "ReferencedEntity" }],
  ["task-skipped", { task: "Task", referencedEntity: "ReferencedEntity" }],
  ["task-cancelled", { task: "Task", referencedEntity: "ReferencedEntity" }]
]

const action = (verb: string) => ({
  id: "act_1",
  payload: { type: verb, note: "mirrors the request" },
  createdAt: 1_798_000_000,
  createdAtMilliseconds: 1_798_000_000_123,
  unshownActionField: { nested: true }
})

/** A valid sample of each entity, each with a field the spec does not show. */
export const samples: Readonly<Record<string, () => unknown>> = {
  String: () => "id_1",
  MailboxStatus: () => "active",
  Tour: () => ({
    id: "tour_1",
    status: "planned",
    substatus: null,
    properties: { prop_region: "opt_north", prop_any: [1, { deep: "x" }] },
    unshownTourField: "kept"
  }),
  CalloutTour: () => ({ id: "tour_1", properties: { prop_region: "opt_north" } }),
  TourAction: () => action("advance"),
  ShipperAction: () => action("update"),
  ShipperTeamAction: () => action("update"),
  ShipperUserAction: () => action("update"),
  CalloutAction: () => ({ ...action("bid"), createdAt: 1_798_000_000_123 }),
  SequenceInvocationAction: () => action("step"),
  TransportDraftAction: () => ({
    ...action("activate-recurring"),
    payload: { type: "activate-recurring" },
    draftId: "drf_1",
    actor: { type: "api-key", id: "key_1" }
  }),
  CarrierAction: () => action("update"),
  CarrierTeamAction: () => action("update"),
  CarrierUserAction: () => action("update"),
  DocumentLinkAction: () => action("link"),
  LegAction: () => action("pickup"),
  Shipment: () => ({ id: "shp_1", status: "open", unshown: 1 }),
  Order: () => ({ id: "ord_1", unshown: "x" }),
  DocumentLink: () => ({ id: "dl_1", targetEntityType: "task", unshown: true }),
  OperatorUserInvite: () => ({ id: "inv_1", email: "a@example.org" }),
  OperatorUser: () => ({ id: "usr_1", email: "a@example.org" }),
  Shipper: () => ({ id: "shp_1", name: "ACME" }),
  ShipperTeam: () => ({ id: "st_1", name: "Team" }),
  ShipperUser: () => ({ id: "su_1", name: "User" }),
  ShipperAddress: () => ({ id: "sa_1", city: "Berlin" }),
  Mailbox: () => ({ id: "mbx_1", status: "inactive", address: "in@example.org" }),
  TransportDraft: () => ({
    id: "drf_1",
    origin: "manual",
    status: "draft",
    isValid: null,
    name: "Line {{ weekday }}",
    transport: { tour: { vehicleClass: "vc_12t" } },
    transportShapeId: "shape_line",
    inboxId: null,
    payload: null,
    templateDraftId: null,
    recurringSchedule: {
      cronExpressions: ["0 6 * * 1-5"],
      timezone: "Europe/Berlin",
      leadTimeDays: 7,
      weekdayTimeOffsets: { sat: 60 },
      vehicleClassAdjustmentStrategy: "preserve"
    },
    createdAt: 1_798_000_000,
    updatedAt: 1_798_000_000
  }),
  CalloutWithStats: () => ({ id: "co_1", currentBid: 950, bidCount: 3, isWinning: true, suggestedBid: 900 }),
  Carrier: () => ({ id: "car_1", name: "Haul" }),
  CarrierTeam: () => ({ id: "ct_1" }),
  CarrierUser: () => ({ id: "cu_1" }),
  Leg: () => ({
    id: "leg_1",
    status: "in-transit",
    loads: [
      { id: "load_1", status: "Returned", returnShipmentId: "shp_9" },
      {
        id: "load_2",
        status: "Perished",
        writeOff: { reason: "Damaged", note: "crushed", writtenOffBy: "usr_1", disposedAt: 1, disposedBy: "usr_2" }
      },
      { id: "load_3", status: "Perished", writeOff: { reason: "Lost", writtenOffBy: "usr_1" } },
      { id: "load_4", status: "loaded", weightKg: 12 }
    ]
  }),
  Comment: () => ({ id: "cmt_1", text: "hi" }),
  CommentReaction: () => ({ id: "rct_1", emoji: "+1" }),
  Task: () => ({
    id: "task_1",
    kind: "checklist",
    status: "open",
    assignee: "usr_1",
    origin: "template",
    templateId: "tpl_1",
    templateKey: "pod",
    createdAt: 1_798_000_000
  }),
  CompletedTask: () => ({
    id: "task_1",
    kind: "form",
    status: "completed",
    outcome: { formOutput: { el_1: "yes", el_2: 4 } },
    templateId: "tpl_1"
  }),
  ReferencedEntity: () => ({ orn: "orn:tour:tour_1", type: "tour", id: "tour_1" }),
  SequenceInvocation: () => ({ id: "seq_1" })
}

/** A sample value for an entity name as written in the spec table. */
export const sampleOf = (entity: string): unknown =>
  entity.endsWith("[]") ? [samples[entity.slice(0, -2)]!()] : samples[entity]!()

/** A valid payload with every key (optional ones included) of a spec row. */
export const fullPayload = (keys: Readonly<Record<string, string>>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(keys).map(([key, entity]) => [key.replace(/\?$/, ""), sampleOf(entity)]))
