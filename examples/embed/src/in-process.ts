/**
 * A host's own code calling Waybill in process: a customer's webhook registered from the host's
 * settings page, and the delivery log it shows, with no HTTP and no API key.
 */
import * as Waybill from "@waybill/server/Waybill"

/** Registers a webhook for the workspace's `order-created` events, or answers the API's refusal. */
export const subscribe = async (waybill: Waybill.Waybill, workspaceId: string, url: string, secret: string) => {
  const workspace = waybill.forWorkspace(workspaceId)
  try {
    const hook = await workspace.webhooks.create({ url, events: ["order-created"], auth: { type: "hmac", secret } })
    return { status: 201, body: hook }
  } catch (error) {
    // The same status and body as the HTTP route: `{ code, message, issues }`.
    if (Waybill.isWaybillError(error)) return { status: error.status, body: error.toJSON() }
    throw error
  }
}

/** The webhook's latest deliveries, newest first, each with its attempts. */
export const latestDeliveries = (waybill: Waybill.Waybill, workspaceId: string, webhookId: string) =>
  waybill.forWorkspace(workspaceId).webhooks.deliveries(webhookId, { limit: 20 })
