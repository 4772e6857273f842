/** `tour-action-created` → `TourActionCreated`, for schema identifiers. */
export const pascal = (type: string): string =>
  type
    .split("-")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("")
