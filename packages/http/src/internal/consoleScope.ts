/**
 * Where a console token may go (contract §5): by scope, the console's endpoints, named in the API
 * definition; every other route that takes a credential refuses it (403).
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type { ConsoleTokenScope } from "@waybill/core/ConsoleTokens"
import { WaybillApi } from "../Api.js"
import { Authentication } from "../Authentication.js"
import { extraPaths, routeOf } from "./observe.js"

const read = [
  "webhooks.list",
  "webhooks.get",
  "webhooks.deliveries",
  "webhooks.stats",
  "webhooks.filterFields",
  "webhooks.alerts",
  "console.whoami"
]

const manage = [
  ...read,
  "webhooks.register",
  "console.updateWebhook",
  "webhooks.delete",
  "webhooks.rotate",
  "webhooks.disable",
  "webhooks.enable",
  "webhooks.resend",
  "webhooks.replay"
]

const template = (path: string) =>
  path
    .split("/")
    .map((part) => (part.startsWith(":") ? `{${part.slice(1)}}` : part))
    .join("/")

const scopes: Record<ConsoleTokenScope, Set<string>> = { read: new Set(), manage: new Set() }
// Routes no credential is needed for: their Authorization header is not looked at.
const open = new Set(extraPaths.map((path) => `GET ${path}`))

HttpApi.reflect(WaybillApi, {
  onGroup: () => {},
  onEndpoint: ({ group, endpoint, middleware }) => {
    const route = `${endpoint.method} ${template(endpoint.path)}`
    const name = `${group.identifier}.${endpoint.name}`
    if (!middleware.has(Authentication as never)) open.add(route)
    if (read.includes(name)) scopes.read.add(route)
    if (manage.includes(name)) scopes.manage.add(route)
  }
})

/** What a request with a console token gets at its route: `open` (no credential needed), or whether its scope reaches it. */
export const access = (method: string, url: string): "open" | ((scope: ConsoleTokenScope) => boolean) => {
  const route = `${method === "HEAD" ? "GET" : method} ${routeOf(url)}`
  if (open.has(route)) return "open"
  return (scope) => scopes[scope].has(route)
}
