/**
 * A small JSON Schema (2020-12 subset) validator for the tests: enough to check the generated
 * OpenAPI schemas against sample payloads, so the OpenAPI output and the Effect schemas cannot
 * silently disagree. Unknown keywords make it throw, so nothing is skipped unnoticed.
 */
type Schema = boolean | { readonly [key: string]: unknown }

const known = new Set([
  "$ref",
  "type",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "enum",
  "const",
  "minimum",
  "minLength",
  "pattern",
  "dependentRequired",
  "if",
  "then",
  "else",
  "not",
  "description",
  "title"
])

const typeOf = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "array"
      : typeof value === "number"
        ? Number.isInteger(value)
          ? "integer"
          : "number"
        : typeof value

export const validate = (
  schema: Schema,
  value: unknown,
  resolve: (ref: string) => Schema,
  path = ""
): Array<string> => {
  if (schema === true) return []
  if (schema === false) return [`${path}: not allowed`]
  for (const key of Object.keys(schema)) if (!known.has(key)) throw new Error(`unsupported keyword ${key} at ${path}`)
  const errors: Array<string> = []
  const s = schema as Record<string, unknown>
  if (typeof s.$ref === "string") errors.push(...validate(resolve(s.$ref), value, resolve, path))
  if (typeof s.type === "string") {
    const actual = typeOf(value)
    if (!(actual === s.type || (s.type === "number" && actual === "integer"))) errors.push(`${path}: not ${s.type}`)
  }
  if (Array.isArray(s.enum) && !s.enum.some((option) => option === value)) errors.push(`${path}: not in enum`)
  if ("const" in s && s.const !== value) errors.push(`${path}: not the const`)
  if (typeof s.minimum === "number" && typeof value === "number" && value < s.minimum) errors.push(`${path}: too small`)
  if (typeof s.minLength === "number" && typeof value === "string" && [...value].length < s.minLength) {
    errors.push(`${path}: too short`)
  }
  if (typeof s.pattern === "string" && typeof value === "string" && !new RegExp(s.pattern, "u").test(value)) {
    errors.push(`${path}: does not match ${s.pattern}`)
  }
  if (
    Array.isArray(s.anyOf) &&
    !s.anyOf.some((member) => validate(member as Schema, value, resolve, path).length === 0)
  ) {
    errors.push(`${path}: matches no anyOf member`)
  }
  if (s.not !== undefined && validate(s.not as Schema, value, resolve, path).length === 0)
    errors.push(`${path}: matches not`)
  if (s.if !== undefined) {
    const branch = validate(s.if as Schema, value, resolve, path).length === 0 ? s.then : s.else
    if (branch !== undefined) errors.push(...validate(branch as Schema, value, resolve, path))
  }
  if (Array.isArray(value) && s.items !== undefined) {
    value.forEach((item, index) => {
      errors.push(...validate(s.items as Schema, item, resolve, `${path}.${index}`))
    })
  }
  if (typeOf(value) === "object") {
    const record = value as Record<string, unknown>
    for (const key of (s.required as Array<string> | undefined) ?? []) {
      if (!Object.hasOwn(record, key)) errors.push(`${path}.${key}: missing`)
    }
    const properties = (s.properties as Record<string, Schema> | undefined) ?? {}
    for (const [key, inner] of Object.entries(record)) {
      if (Object.hasOwn(properties, key)) errors.push(...validate(properties[key]!, inner, resolve, `${path}.${key}`))
      else if (s.additionalProperties !== undefined) {
        errors.push(...validate(s.additionalProperties as Schema, inner, resolve, `${path}.${key}`))
      }
    }
    for (const [key, needs] of Object.entries(
      (s.dependentRequired as Record<string, Array<string>> | undefined) ?? {}
    )) {
      if (Object.hasOwn(record, key)) {
        for (const need of needs) if (!Object.hasOwn(record, need)) errors.push(`${path}.${need}: required by ${key}`)
      }
    }
  }
  return errors
}
