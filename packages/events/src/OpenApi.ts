/**
 * The OpenAPI 3.1 `webhooks` section of `/openapi.json`, derived from the catalogue: one POST per
 * event type with its envelope as body and the delivery headers.
 * @since 0.1.0
 */
import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import * as AST from "effect/SchemaAST"
import { envelopeSchema } from "./Envelope.js"
import { all, type EventType } from "./EventType.js"
import { schemas } from "./Payload.js"

/** A JSON object as it appears in an OpenAPI document. @since 0.1.0 */
export interface JsonObject {
  readonly [key: string]: unknown
}

/** What the HTTP layer merges into its OpenAPI document: `webhooks` and the components they use. @since 0.1.0 */
export interface OpenApiWebhooks {
  readonly webhooks: { readonly [K in EventType]: JsonObject }
  readonly components: {
    readonly schemas: { readonly [name: string]: JsonObject }
    readonly parameters: { readonly [name: string]: JsonObject }
    readonly securitySchemes: { readonly [name: string]: JsonObject }
  }
}

const definitionPath = "#/components/schemas/"

/**
 * The tag of the webhooks section's operations: the events Waybill sends, apart from the API's
 * own "Webhooks" routes that register the receivers.
 * @since 0.2.0
 */
export const deliveredEventsTag = "Events delivered to webhooks"

// Effect marks its built-in schemas with `$id: "/schemas/…"`; the same `$id` repeated across a
// document is ambiguous to JSON Schema validators, so it is dropped (with its generic title).
const clean = (value: unknown, rename: (name: string) => string): unknown => {
  if (Array.isArray(value)) return value.map((item) => clean(item, rename))
  if (typeof value !== "object" || value === null) return value
  const record = value as JsonObject
  const builtin =
    typeof record.$id === "string" && record.$id.startsWith("/schemas/") ? record.$id.slice("/schemas/".length) : ""
  return Object.fromEntries(
    Object.entries(record).flatMap(([key, inner]): Array<[string, unknown]> => {
      if (builtin !== "" && (key === "$id" || (key === "title" && inner === builtin))) return []
      if (key === "$ref" && typeof inner === "string" && inner.startsWith(definitionPath)) {
        return [[key, definitionPath + rename(inner.slice(definitionPath.length))]]
      }
      return [[key, clean(inner, rename)]]
    })
  )
}

const parameter = (name: string, required: boolean, description: string, schema: JsonObject): JsonObject => ({
  name,
  in: "header",
  required,
  description,
  schema
})

/**
 * Builds the `webhooks` section and its components, named with `componentPrefix` (default
 * `Webhook`: `WebhookTour`) so they never collide with the HTTP API's own schemas.
 * @since 0.1.0
 */
export const openApiWebhooks = (options: { readonly componentPrefix?: string } = {}): OpenApiWebhooks => {
  const prefix = options.componentPrefix ?? "Webhook"
  const rename = (name: string) => `${prefix}${name}`
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const bodies = all.map((type) => {
    const schema = JSONSchema.fromAST(envelopeSchema(type).ast, {
      definitions,
      definitionPath,
      target: "openApi3.1"
    })
    return [type, clean(schema, rename) as JsonObject] as const
  })

  const parameters: Record<string, JsonObject> = {
    [rename("DeliveryId")]: parameter(
      "X-Delivery-Id",
      true,
      "One per event and webhook, constant across the retry: deduplicate on it.",
      { type: "string", pattern: "^dlv_" }
    ),
    [rename("EventId")]: parameter("X-Event-Id", true, "The event id, the same for every webhook.", {
      type: "string",
      pattern: "^evt_"
    }),
    [rename("DeliveryAttempt")]: parameter("X-Delivery-Attempt", true, "1, or 2 for the one retry.", {
      type: "integer",
      enum: [1, 2]
    }),
    [rename("SignatureAlgorithm")]: parameter("X-Signature-Algorithm", false, "HMAC authentication only.", {
      type: "string",
      enum: ["hmac-sha256"]
    }),
    [rename("SignatureTimestamp")]: parameter(
      "X-Signature-Timestamp",
      false,
      "HMAC authentication only: epoch seconds of this attempt.",
      { type: "integer" }
    ),
    [rename("Signature")]: parameter(
      "X-Signature",
      false,
      'HMAC authentication only: lowercase hex HMAC-SHA256(secret, "<timestamp>.<raw body>").',
      { type: "string", pattern: "^[0-9a-f]{64}$" }
    )
  }
  const parameterRefs = Object.keys(parameters).map((name) => ({ $ref: `#/components/parameters/${name}` }))

  const securitySchemes: Record<string, JsonObject> = {
    [rename("Basic")]: {
      type: "http",
      scheme: "basic",
      description: "Webhook auth basic: Authorization: Basic base64(username:password)."
    },
    [rename("Bearer")]: {
      type: "http",
      scheme: "bearer",
      description: "Webhook auth bearer: Authorization: Bearer <token>."
    },
    [rename("Hmac")]: {
      type: "apiKey",
      in: "header",
      name: "X-Signature",
      description:
        "Webhook auth hmac: X-Signature over '<X-Signature-Timestamp>.<raw body>' with the shared secret; " +
        "X-Signature-Algorithm is hmac-sha256. Reject timestamps outside a replay window (about 5 minutes)."
    }
  }

  const webhooks = Object.fromEntries(
    bodies.map(([type, body]) => {
      const description = Option.getOrUndefined(AST.getDescriptionAnnotation(schemas[type].ast))
      return [
        type,
        {
          post: {
            operationId: `webhook.${type}`,
            summary: type,
            ...(typeof description === "string" ? { description } : {}),
            tags: [deliveredEventsTag],
            parameters: [
              ...parameterRefs,
              parameter("X-Event-Type", true, "The event type.", { type: "string", const: type })
            ],
            requestBody: { required: true, content: { "application/json": { schema: body } } },
            security: Object.keys(securitySchemes).map((name) => ({ [name]: [] })),
            responses: {
              "2XX": { description: "Any 2xx within 20 seconds acknowledges the delivery." },
              default: {
                description:
                  "Any other status, a redirect, or no answer within 20 seconds fails the attempt; it is retried " +
                  "once, with the same body and X-Delivery-Id."
              }
            }
          }
        }
      ]
    })
  ) as unknown as { readonly [K in EventType]: JsonObject }

  const componentSchemas = Object.fromEntries(
    Object.entries(definitions).map(([name, schema]) => [rename(name), clean(schema, rename) as JsonObject])
  )
  return { webhooks, components: { schemas: componentSchemas, parameters, securitySchemes } }
}

/**
 * Adds the webhooks section and its components to an OpenAPI document (e.g. `OpenApi.fromApi`'s).
 * Throws when a component name is taken by a different value.
 * @since 0.1.0
 */
export const addTo = <D extends JsonObject>(document: D, section: OpenApiWebhooks = openApiWebhooks()): D => {
  const components = (document.components ?? {}) as Record<string, JsonObject | undefined>
  const merge = (kind: keyof OpenApiWebhooks["components"]) => {
    const existing = components[kind] ?? {}
    for (const [name, value] of Object.entries(section.components[kind])) {
      if (name in existing && JSON.stringify(existing[name]) !== JSON.stringify(value)) {
        throw new Error(`OpenAPI component ${kind}.${name} is already defined differently`)
      }
    }
    return { ...existing, ...section.components[kind] }
  }
  return {
    ...document,
    webhooks: { ...((document.webhooks as JsonObject | undefined) ?? {}), ...section.webhooks },
    components: {
      ...components,
      schemas: merge("schemas"),
      parameters: merge("parameters"),
      securitySchemes: merge("securitySchemes")
    }
  }
}
