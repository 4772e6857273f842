/**
 * Effect's JSON Schema generator stamps schemas of `unknown`, `{}` and `object` with synthetic
 * ids (`"$id": "/schemas/unknown"`), once per use; OpenAPI 3.1 (JSON Schema 2020-12) requires
 * every `$id` to be unique, so they are dropped. They carry no meaning of their own.
 */
const isSyntheticId = (key: string, value: unknown) =>
  key === "$id" && typeof value === "string" && value.startsWith("/schemas/")

export const withoutSyntheticIds = <A>(value: A): A => {
  if (Array.isArray(value)) return value.map(withoutSyntheticIds) as A
  if (typeof value !== "object" || value === null) return value
  const result: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    if (!isSyntheticId(key, child)) result[key] = withoutSyntheticIds(child)
  }
  return result as A
}
