import * as Schema from "effect/Schema"
import { CreateDraft } from "../src/CreateDraft.js"
import type { Draft } from "../src/Draft.js"
import type { ReferenceDataSet, TransportShape, VehicleClass } from "../src/ReferenceData.js"

/** 2026-12-23T07:06:40Z, in epoch seconds; the tests' "now". */
export const NOW_SECONDS = 1_798_000_000
export const NOW = NOW_SECONDS * 1000

export const shapes: ReadonlyArray<TransportShape> = [
  {
    id: "shape_line",
    name: "Line haul",
    outputs: ["tour"],
    recurring: { enabled: true },
    requiredFields: ["transport.tour.vehicleClass"]
  },
  {
    id: "shape_order",
    name: "Order",
    outputs: ["order", "shipments"],
    recurring: { enabled: false },
    requiredFields: []
  },
  { id: "shape_no_recurring", name: "Tour only", outputs: ["tour"], recurring: { enabled: false }, requiredFields: [] },
  {
    id: "shape_no_tour",
    name: "Recurring orders",
    outputs: ["order"],
    recurring: { enabled: true },
    requiredFields: []
  },
  {
    id: "shape_strict",
    name: "Line haul with reference",
    outputs: ["order", "tour"],
    recurring: { enabled: true },
    requiredFields: ["transport.order.reference", "transport.tour.vehicleClass"]
  }
]

export const vehicleClasses: ReadonlyArray<VehicleClass> = [
  { id: "vc_7t5", name: "7.5 t box", maxWeightKg: 2500, rank: 1 },
  { id: "vc_12t", name: "12 t", maxWeightKg: 5000, rank: 2 }
]

export const referenceData: ReferenceDataSet = {
  transportShapes: shapes,
  vehicleClasses,
  products: [{ id: "prod_ftl", name: "FTL booking" }]
}

export const schedule = {
  cronExpressions: ["0 6 * * 1-5"],
  timezone: "Europe/Berlin",
  leadTimeDays: 7,
  startsAt: 1_798_761_600,
  endsAt: 1_830_297_600,
  weekdayTimeOffsets: { sat: 60 },
  vehicleClassAdjustmentStrategy: "preserve"
}

export const masterTransport = {
  multiStopData: {
    stops: [
      {
        address: { street: "Hafenstraße 1", city: "Hamburg", country: "DEU" },
        timeWindow: { from: "06:00", to: "08:00" },
        loads: [{ weightKg: 800 }, { weightKg: 400 }]
      },
      {
        address: { street: "Marienplatz 1", city: "München", country: "DEU" },
        timeWindow: { from: "12:00", to: "14:00" },
        dayOffset: 1,
        loads: [{ weightKg: 1200 }]
      }
    ]
  },
  tour: { vehicleClass: "vc_12t" }
}

/** A valid recurring master request body (JSON as a client sends it). */
export const masterBody = (): Record<string, unknown> =>
  structuredClone({
    origin: "manual",
    status: "draft",
    name: "Line Hamburg–München {{ weekday }} {{date}}",
    transportShapeId: "shape_line",
    transport: masterTransport,
    recurringSchedule: schedule
  })

/** A valid one-off manual draft body. */
export const manualBody = (): Record<string, unknown> => ({
  origin: "manual",
  status: "draft",
  transportShapeId: "shape_order",
  transport: { order: { reference: "PO-1" } }
})

export const decodeCreate = (body: unknown): CreateDraft => Schema.decodeUnknownSync(CreateDraft)(body)

/** A TransportForProducts that parses. */
export const productTransport = (): Record<string, unknown> => ({
  template: { id: "tpl_1" },
  shipperId: "shp_1",
  shipperTeamId: "team_1",
  shipperUserId: "user_1",
  order: { reference: "PO-1", customer: { name: "ACME", address: { countryCode: "DEU" } } },
  shipments: [{ id: "s1", pickup: { country: "DEU" }, delivery: { country: "AUT" } }],
  sharedShipment: {},
  tour: { vehicleClass: "vc_12t" },
  multiStopData: {
    stops: [
      { address: { country: "DEU" }, loads: [{ weightKg: 800 }, { weightKg: 200.5 }] },
      { address: { country: "FRA" }, loads: [{ weightKg: 100 }] }
    ]
  },
  discoveredFields: {},
  confirmedSections: ["order"],
  features: {},
  properties: { shipmentsCreator: {}, tourBar: {} }
})

export const draftOf = (overrides: Partial<Draft> = {}): Draft => ({
  id: "drf_0000000000aaaaaaaaaaaaaaaa",
  origin: "manual",
  status: "draft",
  isValid: null,
  name: "Line {{ weekday }}",
  transport: structuredClone(masterTransport),
  transportShapeId: "shape_line",
  inboxId: null,
  payload: null,
  templateDraftId: null,
  recurringSchedule: { ...schedule, vehicleClassAdjustmentStrategy: "preserve", weekdayTimeOffsets: { sat: 60 } },
  createdAt: NOW_SECONDS,
  updatedAt: NOW_SECONDS,
  ...overrides
})
