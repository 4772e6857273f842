/** Picks the subscribed events from the catalogue's 60 types, with a search box. */
import * as EventType from "@waybill/events/EventType"
import { useState } from "preact/hooks"
import { controlId } from "./filterModel.js"
import { FieldIssues, type Issues } from "./Issues.js"

export const EventPicker = (props: {
  readonly selected: ReadonlyArray<EventType.EventType>
  readonly issues: Issues
  readonly onChange: (events: ReadonlyArray<EventType.EventType>) => void
}) => {
  const [search, setSearch] = useState("")
  const words = search
    .trim()
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== "")
  const shown = EventType.all.filter((type) => words.every((word) => type.includes(word)))
  const toggle = (type: EventType.EventType, on: boolean) =>
    props.onChange(EventType.all.filter((candidate) => (candidate === type ? on : props.selected.includes(candidate))))
  return (
    <fieldset class="events" id={controlId("events")} tabIndex={-1}>
      <legend>
        Subscribed events{" "}
        <span class="count">
          ({props.selected.length} of {EventType.all.length} selected)
        </span>
      </legend>
      <FieldIssues issues={props.issues} path="events" />
      {props.issues
        .filter((issue) => issue.path.startsWith("events."))
        .map((issue) => (
          <p class="field-error" key={issue.path}>
            {issue.path}: {issue.message}
          </p>
        ))}
      <label for="event-search">Search event types</label>
      <input
        id="event-search"
        type="search"
        value={search}
        placeholder="e.g. tour action"
        onInput={(event) => setSearch(event.currentTarget.value)}
      />
      <ul class="event-list">
        {shown.map((type) => (
          <li key={type}>
            <input
              id={`event-${type}`}
              type="checkbox"
              checked={props.selected.includes(type)}
              onChange={(event) => toggle(type, event.currentTarget.checked)}
            />
            <label for={`event-${type}`}>{type}</label>
          </li>
        ))}
        {shown.length === 0 && <li class="hint">No event type matches “{search}”.</li>}
      </ul>
    </fieldset>
  )
}
