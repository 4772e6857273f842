/**
 * What a webhook URL means for a request, worked out once per URL: refused, or where to send; and the
 * refusal of a name by the addresses it resolves to.
 */
import type { ErrorClass } from "@waybill/webhooks/Delivery"
import * as Ssrf from "@waybill/webhooks/Ssrf"
import * as Option from "effect/Option"

/** A URL's request target, or why there is none. */
export type Target =
  | { readonly _tag: "Refused"; readonly reason: ErrorClass; readonly message: string }
  | { readonly _tag: "Target"; readonly url: URL; readonly host: string; readonly isLiteral: boolean }

const refused = (reason: ErrorClass, message: string): Target => ({ _tag: "Refused", reason, message })

/** The target of a URL; IP literals are checked here, as nothing looks them up. */
export const targetOf = (text: string, allowPrivateTargets: boolean): Target => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return refused("connect", "The target URL does not parse")
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return refused("connect", `Unsupported protocol ${url.protocol}`)
  }
  const host = Ssrf.hostOf(url)
  const literal = Ssrf.parseAddress(host)
  if (!allowPrivateTargets && Option.isSome(literal)) {
    const category = Ssrf.classify(literal.value)
    if (Option.isSome(category)) {
      return refused(
        "ssrf",
        `${host} is ${Ssrf.describe(category.value)}; private targets are not allowed (${Ssrf.allowPrivateTargetsHint})`
      )
    }
  }
  return { _tag: "Target", url, host, isLiteral: Option.isSome(literal) }
}

/** Why a name is refused by the addresses it resolves to (any one refused refuses it), if it is. */
export const refusalOfName = (host: string, addresses: ReadonlyArray<string>): string | undefined => {
  for (const address of addresses) {
    const category = Ssrf.refusal(address)
    if (Option.isSome(category)) {
      return `${host} resolves to ${Ssrf.describe(category.value)} (${address}); private targets are not allowed (${Ssrf.allowPrivateTargetsHint})`
    }
  }
  return undefined
}

/** A bounded memo of targets by URL (a webhook's URL never changes; URLs are not a fixed set). */
export const makeTargets = (allowPrivateTargets: boolean) => {
  const targets = new Map<string, Target>()
  return (text: string): Target => {
    let target = targets.get(text)
    if (target === undefined) {
      target = targetOf(text, allowPrivateTargets)
      if (targets.size >= 10_000) targets.clear()
      targets.set(text, target)
    }
    return target
  }
}
