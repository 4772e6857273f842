/**
 * A titled part of a page: a `section` named by its `h2` (`aria-labelledby`), so that assistive
 * technology lists it as a region under its title.
 */
import type { ComponentChildren } from "preact"

/** A region with its heading; `id` names the heading (unique on the page). */
export const Section = (props: {
  readonly id: string
  readonly title: string
  readonly children: ComponentChildren
}) => (
  <section aria-labelledby={props.id}>
    <h2 id={props.id}>{props.title}</h2>
    {props.children}
  </section>
)
