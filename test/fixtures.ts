/** Fixtures shared by the end-to-end suites. */

// The contract's example master (§2): weekdays at 06:00 Berlin, 7 days ahead, from 2027-01-01.
export const contractMaster = () => ({
  origin: "manual",
  status: "draft",
  name: "Line {{ weekday }}",
  transportShapeId: "shape_line",
  transport: {
    multiStopData: {
      stops: [
        {
          address: { city: "Hamburg", country: "DEU" },
          timeWindow: { from: "06:00", to: "08:00" },
          loads: [{ weightKg: 900 }]
        },
        { address: { city: "Berlin", country: "DEU" }, timeWindow: { from: "13:00", to: "15:00" }, dayOffset: 1 }
      ]
    },
    tour: { vehicleClass: "vc_12t" }
  },
  recurringSchedule: {
    cronExpressions: ["0 6 * * 1-5"],
    timezone: "Europe/Berlin",
    leadTimeDays: 7,
    startsAt: 1798761600,
    endsAt: 1830297600,
    weekdayTimeOffsets: { sat: 60 },
    vehicleClassAdjustmentStrategy: "preserve"
  }
})
