import * as Schema from "effect/Schema"

/** A literal union that reports one issue per wrong value ("must be one of …"), not one per literal. */
export const oneOf = <const L extends ReadonlyArray<string>>(...values: L) =>
  Schema.Literal(...values).annotations({
    message: () => ({
      message: `must be one of ${values.map((value) => JSON.stringify(value)).join(", ")}`,
      override: true
    })
  })

/** An optional key that may be absent but, when present, is never `undefined`. */
export const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** Two optional keys that come together: both or neither, else an issue at the one missing. */
export const together =
  (first: string, second: string, message: string) =>
  <S extends Schema.Schema.Any>(self: S): Schema.filter<S> =>
    Schema.filter<S>(
      (value) => {
        const record = value as Record<string, unknown>
        return (record[first] === undefined) === (record[second] === undefined)
          ? undefined
          : { path: [record[first] === undefined ? first : second], message }
      },
      { jsonSchema: { dependentRequired: { [first]: [second], [second]: [first] } } }
    )(self)
