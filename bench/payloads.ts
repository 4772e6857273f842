/**
 * Request bodies the HTTP benchmarks send.
 */

/** A realistic recurring master for `POST /drafts`: three stops, two cron expressions. */
export const master = {
  origin: "manual",
  status: "draft",
  name: "Line Hamburg–München {{ weekday }} {{ date }}",
  transportShapeId: "shape_line",
  transport: {
    shipperId: "shp_1",
    multiStopData: {
      stops: [
        {
          address: { street: "Hafenstraße 1", city: "Hamburg", country: "DEU" },
          timeWindow: { from: "06:00", to: "08:00" },
          loads: [{ weightKg: 800 }, { weightKg: 400 }]
        },
        {
          address: { street: "Messberg 4", city: "Hamburg", country: "DEU" },
          timeWindow: { from: "09:00", to: "10:00" },
          loads: [{ weightKg: 300 }]
        },
        {
          address: { street: "Marienplatz 1", city: "München", country: "DEU" },
          timeWindow: { from: "12:00", to: "14:00" },
          dayOffset: 1
        }
      ]
    },
    tour: { vehicleClass: "vc_12t" }
  },
  recurringSchedule: {
    cronExpressions: ["0 6 * * 1-5", "30 7 * * 6"],
    timezone: "Europe/Berlin",
    leadTimeDays: 7,
    startsAt: Math.floor(Date.now() / 1000) + 86_400,
    endsAt: Math.floor(Date.now() / 1000) + 365 * 86_400,
    weekdayTimeOffsets: { sat: 60 },
    vehicleClassAdjustmentStrategy: "recalculate"
  }
}

/** A `POST /events` body: a tour created in the north region. */
export const tourCreated = (i: number) =>
  JSON.stringify({
    type: "tour-created",
    payload: {
      tour: { id: `tour_${i}`, status: "planned", substatus: null, properties: { prop_region: "opt_north" } }
    }
  })
