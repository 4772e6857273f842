/** The name-resolution port used at registration, so a name of a refused address is refused early. @since 0.1.0 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** @since 0.1.0 */
export class HostResolver extends Context.Tag("@waybill/webhooks/HostResolver")<
  HostResolver,
  {
    /** Every address (IPv4 and IPv6) of a host name; empty when it does not resolve. */
    readonly resolve: (host: string) => Effect.Effect<ReadonlyArray<string>>
  }
>() {}

/** A resolver over a fixed table of names (case-insensitive, trailing dot ignored). @since 0.1.0 */
export const layerStatic = (table: Readonly<Record<string, ReadonlyArray<string>>>): Layer.Layer<HostResolver> => {
  const normalise = (name: string) => (name.endsWith(".") ? name.slice(0, -1) : name).toLowerCase()
  const entries = new Map(Object.entries(table).map(([name, addresses]) => [normalise(name), addresses]))
  return Layer.succeed(
    HostResolver,
    HostResolver.of({ resolve: (host) => Effect.succeed(entries.get(normalise(host)) ?? []) })
  )
}

/** A resolver that resolves nothing: every name is left to the connect-time check. @since 0.1.0 */
export const layerNone: Layer.Layer<HostResolver> = layerStatic({})
