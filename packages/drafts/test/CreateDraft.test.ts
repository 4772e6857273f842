import { assert, describe, it } from "@effect/vitest"
import type * as Issue from "@waybill/core/Issue"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { type CreateContext, validateCreate } from "../src/CreateDraft.js"
import { type Draft, toJson } from "../src/Draft.js"
import * as DraftEvents from "../src/DraftEvents.js"
import { lookup } from "../src/ReferenceData.js"
import { draftOf, manualBody, masterBody, masterTransport, NOW, NOW_SECONDS, schedule, shapes } from "./fixtures.js"

const context = (template: Option.Option<Draft> = Option.none()): CreateContext => ({
  id: "drf_0000000001bbbbbbbbbbbbbbbb",
  now: NOW,
  transportShape: lookup(shapes),
  template
})

// The body as received: validateCreate decodes it field by field itself.
const run = (body: unknown, template?: Draft) =>
  validateCreate(body, context(template === undefined ? Option.none() : Option.some(template)))

const issuesOf = (body: unknown, template?: Draft): ReadonlyArray<Issue.Issue> =>
  Either.match(run(body, template), { onLeft: (issues) => issues, onRight: () => [] })

const pathsOf = (body: unknown, template?: Draft): ReadonlyArray<string> =>
  issuesOf(body, template).map((issue) => issue.path)

const stop =
  (index: number) =>
  (body: Record<string, unknown>): Record<string, unknown> => {
    const transport = body.transport as typeof masterTransport
    return transport.multiStopData.stops[index] as unknown as Record<string, unknown>
  }

const withStop =
  (index: number, change: (stop: Record<string, unknown>) => void) =>
  (body: Record<string, unknown>): Record<string, unknown> => {
    change(stop(index)(body))
    return body
  }

const withSchedule =
  (change: (schedule: Record<string, unknown>) => void) =>
  (body: Record<string, unknown>): Record<string, unknown> => {
    change(body.recurringSchedule as Record<string, unknown>)
    return body
  }

describe("validateCreate: accepted requests", () => {
  const accepted: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ["a manual draft", manualBody()],
    ["a hub draft", { ...manualBody(), origin: "hub" }],
    [
      "a decode draft in review-order with payload and inbox",
      { ...manualBody(), origin: "decode", status: "review-order", payload: { raw: 1 }, inboxId: "inb_1" }
    ],
    ["a decode draft in review-rfq", { ...manualBody(), origin: "decode", status: "review-rfq" }],
    ["a draft without transport", { origin: "manual", status: "draft", transportShapeId: "shape_order" }],
    ["a partial transport (stored leniently)", { ...manualBody(), transport: { order: { weird: [1, "x"] } } }],
    ["null payload and inboxId on a manual draft", { ...manualBody(), payload: null, inboxId: null }],
    ["the allowed placeholders on a one-off draft", { ...manualBody(), name: "{{weekday}} / {{  date  }}" }],
    ["a recurring master", masterBody()],
    ["a hub recurring master", { ...masterBody(), origin: "hub" }],
    [
      "a master whose vehicle class is unknown (checked at activation)",
      (() => {
        const body = masterBody()
        ;(body.transport as { tour: { vehicleClass: string } }).tour.vehicleClass = "vc_unknown"
        return body
      })()
    ],
    [
      "a master without startsAt/endsAt",
      withSchedule((s) => {
        delete s.startsAt
        delete s.endsAt
      })(masterBody())
    ],
    [
      "a master starting exactly now",
      withSchedule((s) => {
        s.startsAt = NOW_SECONDS
      })(masterBody())
    ],
    [
      "a stop with dayOffset 0",
      withStop(0, (s) => {
        s.dayOffset = 0
      })(masterBody())
    ],
    ["unclosed braces are literal text", { ...manualBody(), name: "Line {{ weekday" }]
  ]
  for (const [name, body] of accepted) {
    it(name, () => {
      const result = run(body)
      assert.deepStrictEqual(Either.isRight(result) ? [] : result.left, [])
    })
  }

  it("builds the draft of contract §2", () => {
    const result = run(masterBody())
    assert.isTrue(Either.isRight(result))
    const draft = Either.getOrThrow(result)
    assert.strictEqual(draft.id, "drf_0000000001bbbbbbbbbbbbbbbb")
    assert.strictEqual(draft.status, "draft")
    assert.strictEqual(draft.createdAt, NOW_SECONDS)
    assert.strictEqual(draft.updatedAt, NOW_SECONDS)
    assert.strictEqual(draft.isValid, null)
    assert.strictEqual(draft.inboxId, null)
    assert.strictEqual(draft.payload, null)
    assert.strictEqual(draft.templateDraftId, null)
    assert.deepStrictEqual(draft.transport, masterTransport)
    assert.deepStrictEqual(draft.recurringSchedule, { ...schedule, vehicleClassAdjustmentStrategy: "preserve" })
  })

  it("fills in the default vehicle-class strategy", () => {
    const draft = Either.getOrThrow(run(withSchedule((s) => delete s.vehicleClassAdjustmentStrategy)(masterBody())))
    assert.strictEqual(draft.recurringSchedule?.vehicleClassAdjustmentStrategy, "recalculate")
  })

  it("stores isValid as given", () => {
    assert.strictEqual(Either.getOrThrow(run({ ...manualBody(), isValid: false })).isValid, false)
  })
})

describe("validateCreate: every rule refuses", () => {
  const refused: ReadonlyArray<readonly [string, Record<string, unknown>, ReadonlyArray<string>, string]> = [
    ["active-recurring at creation", { ...manualBody(), status: "active-recurring" }, ["status"], "at creation"],
    ["paused-recurring at creation", { ...manualBody(), status: "paused-recurring" }, ["status"], "at creation"],
    ["ended-recurring at creation", { ...manualBody(), status: "ended-recurring" }, ["status"], "at creation"],
    ["a recurring status on a master", { ...masterBody(), status: "active-recurring" }, ["status"], "activate"],
    ["review-order on a manual draft", { ...manualBody(), status: "review-order" }, ["status"], "must be draft"],
    ["review-rfq on a hub draft", { ...manualBody(), origin: "hub", status: "review-rfq" }, ["status"], "hub"],
    ["draft on a decode draft", { ...manualBody(), origin: "decode" }, ["status"], "review-order or review-rfq"],
    ["a payload on a manual draft", { ...manualBody(), payload: { raw: 1 } }, ["payload"], "decode drafts"],
    ["a payload on a hub draft", { ...manualBody(), origin: "hub", payload: {} }, ["payload"], "decode drafts"],
    ["an inboxId on a manual draft", { ...manualBody(), inboxId: "inb_1" }, ["inboxId"], "decode drafts"],
    ["an inboxId on a hub draft", { ...manualBody(), origin: "hub", inboxId: "inb_1" }, ["inboxId"], "decode"],
    ["a missing transport shape", { origin: "manual", status: "draft" }, ["transportShapeId"], "is required"],
    ["a null transport shape", { ...manualBody(), transportShapeId: null }, ["transportShapeId"], "is required"],
    ["an unknown transport shape", { ...manualBody(), transportShapeId: "shape_x" }, ["transportShapeId"], "no"],
    ["an unknown placeholder", { ...manualBody(), name: "Tour {{ customer }}" }, ["name"], "{{ customer }}"],
    ["an empty placeholder", { ...manualBody(), name: "Tour {{}}" }, ["name"], "{{}}"],
    ["a placeholder in the wrong case", { ...manualBody(), name: "{{ Weekday }}" }, ["name"], "Weekday"],
    [
      "each unknown placeholder",
      { ...masterBody(), name: "{{ weekday }} {{ foo }} {{bar}}" },
      ["name", "name"],
      "only {{ weekday }} and {{ date }}"
    ],
    ["an unknown template draft", { ...manualBody(), templateDraftId: "drf_missing" }, ["templateDraftId"], "no"],
    // Rule 1: origin manual or hub, status draft.
    [
      "a decode recurring master",
      { ...masterBody(), origin: "decode", status: "review-order" },
      ["status", "origin"],
      "for a recurring master"
    ],
    ["a master in review-order", { ...masterBody(), status: "review-order" }, ["status"], "must be draft"],
    // Rule 2: the shape is recurring-enabled and outputs tours.
    [
      "a master on a shape without recurring mode",
      { ...masterBody(), transportShapeId: "shape_no_recurring" },
      ["transportShapeId"],
      "recurring mode"
    ],
    [
      "a master on a shape without tour output",
      { ...masterBody(), transportShapeId: "shape_no_tour" },
      ["transportShapeId"],
      "tours"
    ],
    [
      "a master on a shape with neither",
      { ...masterBody(), transportShapeId: "shape_order" },
      ["transportShapeId", "transportShapeId"],
      "shape_order"
    ],
    // Rule 3: at least 2 stops.
    [
      "a master with one stop",
      {
        ...masterBody(),
        transport: { ...masterTransport, multiStopData: { stops: [masterTransport.multiStopData.stops[0]] } }
      },
      ["transport.multiStopData.stops"],
      "at least 2 stops"
    ],
    [
      "a master with no stops",
      { ...masterBody(), transport: { tour: { vehicleClass: "vc_12t" } } },
      ["transport.multiStopData.stops"],
      "at least 2 stops"
    ],
    [
      "a master whose stops are not an array",
      { ...masterBody(), transport: { ...masterTransport, multiStopData: { stops: {} } } },
      ["transport.multiStopData.stops"],
      "array"
    ],
    // Rule 4: address and time window per stop.
    [
      "a stop that is not an object",
      {
        ...masterBody(),
        transport: { ...masterTransport, multiStopData: { stops: [masterTransport.multiStopData.stops[0], "x"] } }
      },
      ["transport.multiStopData.stops.1"],
      "must be an object"
    ],
    [
      "a stop without address",
      withStop(0, (s) => delete s.address)(masterBody()),
      ["transport.multiStopData.stops.0.address"],
      "non-empty address"
    ],
    [
      "a stop with an empty address",
      withStop(1, (s) => {
        s.address = {}
      })(masterBody()),
      ["transport.multiStopData.stops.1.address"],
      "non-empty address"
    ],
    [
      "a stop with a string address",
      withStop(1, (s) => {
        s.address = "Hafenstraße 1"
      })(masterBody()),
      ["transport.multiStopData.stops.1.address"],
      "non-empty address"
    ],
    [
      "a stop without time window",
      withStop(1, (s) => delete s.timeWindow)(masterBody()),
      ["transport.multiStopData.stops.1.timeWindow"],
      "HH:MM"
    ],
    [
      "a window time without leading zero",
      withStop(0, (s) => {
        s.timeWindow = { from: "6:00", to: "08:00" }
      })(masterBody()),
      ["transport.multiStopData.stops.0.timeWindow.from"],
      "24-hour"
    ],
    [
      "a window ending at 24:00",
      withStop(0, (s) => {
        s.timeWindow = { from: "22:00", to: "24:00" }
      })(masterBody()),
      ["transport.multiStopData.stops.0.timeWindow.to"],
      "24-hour"
    ],
    [
      "a window with both times missing",
      withStop(0, (s) => {
        s.timeWindow = {}
      })(masterBody()),
      ["transport.multiStopData.stops.0.timeWindow.from", "transport.multiStopData.stops.0.timeWindow.to"],
      "24-hour"
    ],
    [
      "a window that ends before it starts",
      withStop(0, (s) => {
        s.timeWindow = { from: "10:00", to: "09:59" }
      })(masterBody()),
      ["transport.multiStopData.stops.0.timeWindow"],
      "before"
    ],
    [
      "an empty window",
      withStop(0, (s) => {
        s.timeWindow = { from: "10:00", to: "10:00" }
      })(masterBody()),
      ["transport.multiStopData.stops.0.timeWindow"],
      "before"
    ],
    // Rule 5: dayOffset a non-negative integer.
    ...[-1, 1.5, "1", null, true].map(
      (value) =>
        [
          `dayOffset ${JSON.stringify(value)}`,
          withStop(1, (s) => {
            s.dayOffset = value
          })(masterBody()),
          ["transport.multiStopData.stops.1.dayOffset"],
          "non-negative integer"
        ] as const
    ),
    [
      "dayOffset beyond a year",
      withStop(1, (s) => {
        s.dayOffset = 366
      })(masterBody()),
      ["transport.multiStopData.stops.1.dayOffset"],
      "at most 365"
    ],
    // Rule 6: a vehicle class id.
    ...[undefined, "", "  ", 12].map(
      (value) =>
        [
          `vehicle class ${JSON.stringify(value)}`,
          {
            ...masterBody(),
            transport: { ...masterTransport, tour: value === undefined ? {} : { vehicleClass: value } }
          },
          ["transport.tour.vehicleClass"],
          "vehicle class id"
        ] as const
    ),
    [
      "a master without transport",
      { ...masterBody(), transport: null },
      ["transport.multiStopData.stops", "transport.tour.vehicleClass"],
      "recurring master"
    ],
    // Rule 7: the schedule itself, startsAt not in the past, endsAt after start (or now).
    [
      "an invalid cron expression",
      withSchedule((s) => {
        s.cronExpressions = ["0 6 * *"]
      })(masterBody()),
      ["recurringSchedule.cronExpressions.0"],
      "5 fields"
    ],
    [
      "an invalid time zone",
      withSchedule((s) => {
        s.timezone = "Mars/Olympus"
      })(masterBody()),
      ["recurringSchedule.timezone"],
      "IANA"
    ],
    [
      "a missing lead time",
      withSchedule((s) => delete s.leadTimeDays)(masterBody()),
      ["recurringSchedule.leadTimeDays"],
      "required"
    ],
    [
      "startsAt in the past",
      withSchedule((s) => {
        s.startsAt = NOW_SECONDS - 1
      })(masterBody()),
      ["recurringSchedule.startsAt"],
      "past"
    ],
    [
      "endsAt before startsAt",
      withSchedule((s) => {
        s.endsAt = (s.startsAt as number) - 3600
      })(masterBody()),
      ["recurringSchedule.endsAt"],
      "after startsAt"
    ],
    [
      "endsAt equal to startsAt",
      withSchedule((s) => {
        s.endsAt = s.startsAt
      })(masterBody()),
      ["recurringSchedule.endsAt"],
      "after startsAt"
    ],
    [
      "endsAt in the past without startsAt",
      withSchedule((s) => {
        delete s.startsAt
        s.endsAt = NOW_SECONDS - 60
      })(masterBody()),
      ["recurringSchedule.endsAt"],
      "after now"
    ],
    [
      "a schedule that is not an object",
      { ...masterBody(), recurringSchedule: "weekly" },
      ["recurringSchedule"],
      "object"
    ]
  ]
  for (const [name, body, paths, fragment] of refused) {
    it(name, () => {
      const issues = issuesOf(body)
      assert.deepStrictEqual(
        issues.map((issue) => issue.path),
        paths,
        JSON.stringify(issues)
      )
      for (const issue of issues) assert.include(issue.message, fragment)
    })
  }

  it("reports every violated rule together", () => {
    const body = {
      origin: "decode",
      status: "active-recurring",
      name: "{{ customer }}",
      transportShapeId: "shape_order",
      payload: { raw: true },
      transport: {
        multiStopData: { stops: [{ address: {}, timeWindow: { from: "9", to: "08:00" }, dayOffset: -2 }] },
        tour: {}
      },
      recurringSchedule: { cronExpressions: ["nope"], timezone: "UTC", leadTimeDays: 7, startsAt: NOW_SECONDS - 10 }
    }
    assert.deepStrictEqual(pathsOf(body), [
      "status",
      "origin",
      "name",
      "transportShapeId",
      "transportShapeId",
      "transport.multiStopData.stops",
      "transport.multiStopData.stops.0.address",
      "transport.multiStopData.stops.0.timeWindow.from",
      "transport.multiStopData.stops.0.dayOffset",
      "transport.tour.vehicleClass",
      "recurringSchedule.cronExpressions.0",
      "recurringSchedule.startsAt"
    ])
  })
})

describe("validateCreate: templates", () => {
  const template = draftOf({
    id: "drf_0000000000tttttttttttttttt",
    origin: "decode",
    status: "review-order",
    inboxId: "inb_9",
    payload: { raw: 1 },
    isValid: true
  })

  it("copies name, transport, transport shape and schedule, never origin, status, inboxId, payload", () => {
    const draft = Either.getOrThrow(run({ origin: "manual", status: "draft", templateDraftId: template.id }, template))
    assert.strictEqual(draft.name, template.name)
    assert.deepStrictEqual(draft.transport, template.transport)
    assert.strictEqual(draft.transportShapeId, template.transportShapeId)
    assert.deepStrictEqual(draft.recurringSchedule, template.recurringSchedule)
    assert.strictEqual(draft.origin, "manual")
    assert.strictEqual(draft.status, "draft")
    assert.strictEqual(draft.inboxId, null)
    assert.strictEqual(draft.payload, null)
    assert.strictEqual(draft.isValid, null)
    assert.strictEqual(draft.templateDraftId, template.id)
  })

  it("a field present in the request replaces the copied value whole", () => {
    const transport = { multiStopData: masterTransport.multiStopData, tour: { vehicleClass: "vc_7t5" } }
    const draft = Either.getOrThrow(
      run({ origin: "hub", status: "draft", templateDraftId: template.id, name: "Other", transport }, template)
    )
    assert.strictEqual(draft.name, "Other")
    assert.deepStrictEqual(draft.transport, transport)
  })

  it("an explicit null replaces the copied value", () => {
    const draft = Either.getOrThrow(
      run(
        { origin: "manual", status: "draft", templateDraftId: template.id, name: null, recurringSchedule: null },
        template
      )
    )
    assert.strictEqual(draft.name, null)
    assert.strictEqual(draft.recurringSchedule, null)
  })

  it("a copied schedule is validated again", () => {
    const stale = draftOf({
      id: "drf_0000000000ssssssssssssssss",
      recurringSchedule: { ...schedule, vehicleClassAdjustmentStrategy: "preserve", startsAt: NOW_SECONDS - 86_400 }
    })
    assert.deepStrictEqual(pathsOf({ origin: "manual", status: "draft", templateDraftId: stale.id }, stale), [
      "recurringSchedule.startsAt"
    ])
  })

  it("the copied values face the recurring-master rules", () => {
    assert.deepStrictEqual(
      pathsOf({ origin: "manual", status: "draft", templateDraftId: template.id, transport: {} }, template),
      ["transport.multiStopData.stops", "transport.tour.vehicleClass"]
    )
  })

  it("ignores a resolved template when the request names none", () => {
    const draft = Either.getOrThrow(run(manualBody(), template))
    assert.strictEqual(draft.templateDraftId, null)
    assert.strictEqual(draft.recurringSchedule, null)
  })
})

describe("validateCreate: the body's structure and the rules together", () => {
  it("refuses an unknown status or origin with one issue each, beside the missing shape", () => {
    assert.deepStrictEqual(issuesOf({ origin: "email", status: "open" }), [
      { path: "origin", message: 'must be "decode", "hub" or "manual"' },
      { path: "status", message: 'must be "draft", "review-order" or "review-rfq"' },
      { path: "transportShapeId", message: "is required (directly or from the template draft)" }
    ])
  })

  it("reports every required field of an empty body", () => {
    assert.deepStrictEqual(issuesOf({}), [
      { path: "origin", message: "is required" },
      { path: "status", message: "is required" },
      { path: "transportShapeId", message: "is required (directly or from the template draft)" }
    ])
  })

  it("refuses a transport or payload that is not an object, beside the rules", () => {
    assert.deepStrictEqual(pathsOf({ ...manualBody(), transport: [1], payload: "x" }), [
      "transport",
      "payload",
      "payload"
    ])
    assert.deepStrictEqual(issuesOf({ ...manualBody(), transport: [1], payload: "x" })[2], {
      path: "payload",
      message: "is only allowed on decode drafts, not on manual drafts"
    })
  })

  it("runs a master's rules when origin and status are malformed", () => {
    const body = masterBody()
    body.origin = 7
    body.status = null
    ;(body.transport as { tour: unknown }).tour = {}
    withSchedule((schedule) => {
      delete schedule.timezone
    })(body)
    assert.deepStrictEqual(pathsOf(body), [
      "origin",
      "status",
      "transport.tour.vehicleClass",
      "recurringSchedule.timezone"
    ])
  })

  it("still refuses a recurring status when the origin is malformed", () => {
    assert.deepStrictEqual(issuesOf({ origin: "fax", status: "active-recurring", transportShapeId: "shape_line" }), [
      { path: "origin", message: 'must be "decode", "hub" or "manual"' },
      {
        path: "status",
        message: "cannot be active-recurring at creation: create the draft with status draft and activate it"
      }
    ])
  })

  it("does not let a template's value stand in for a malformed field", () => {
    const template = draftOf({ transportShapeId: "shape_line" })
    assert.deepStrictEqual(
      issuesOf({ origin: "manual", status: "draft", transportShapeId: 5, templateDraftId: template.id }, template),
      [{ path: "transportShapeId", message: "must be a string" }]
    )
  })

  it("refuses a body that is not an object at the root", () => {
    for (const body of [null, [], "draft", 3]) {
      assert.deepStrictEqual(issuesOf(body), [{ path: "", message: "must be a JSON object" }])
    }
  })

  it("refuses a body nested deeper than 64 levels at the path where the limit is crossed", () => {
    let deep: unknown = {}
    for (let level = 0; level < 5_000; level++) deep = { a: deep }
    const issues = issuesOf({ ...manualBody(), transport: deep })
    assert.strictEqual(issues.length, 1)
    assert.strictEqual(issues[0]!.path, ["transport", ...Array(63).fill("a")].join("."))
  })

  it("refuses text PostgreSQL could not store (a NUL, an unpaired surrogate) at its path, beside the rules", () => {
    const issues = issuesOf({
      ...manualBody(),
      name: "a\u0000b",
      transport: { note: "\ud800", fine: "\ud83d\ude00" },
      transportShapeId: "shape_unknown"
    })
    assert.deepStrictEqual(
      [...issues].sort((a, b) => a.path.localeCompare(b.path)),
      [
        { path: "name", message: "contains a NUL character (\\u0000), which cannot be stored" },
        {
          path: "transport.note",
          message: "contains an unpaired surrogate (such as \\ud800 alone), which is not Unicode text"
        },
        { path: "transportShapeId", message: "no transport shape with this id exists" }
      ]
    )
  })
})

describe("a new draft's JSON text", () => {
  it("is JSON.stringify of the draft, and its events carry it as their payload's text", () => {
    const master = Either.getOrThrow(run({ ...masterBody(), name: 'Line "A" \\ é 😀 \u2028' }))
    const decodeDraft = draftOf({ origin: "decode", status: "review-order", payload: { raw: "x" }, inboxId: "inb_1" })
    for (const draft of [master, decodeDraft]) {
      assert.strictEqual(toJson(draft), JSON.stringify(draft))
      assert.strictEqual(toJson(draft), toJson(draft))
      const events = DraftEvents.created(draft)
      assert.strictEqual(events.length, draft.origin === "decode" ? 2 : 1)
      for (const event of events) assert.strictEqual(event.payloadJson, JSON.stringify(event.payload))
    }
  })
})
