/** What the signed-in credential may do: a `read` console token sees no control that changes webhooks. */
import { createContext } from "preact"
import { useContext } from "preact/hooks"

/** Whether the signed-in credential may change webhooks (an API key or a `manage` console token). */
export const CanManage = createContext(true)

/** Whether the page may offer a control that changes webhooks. */
export const useCanManage = (): boolean => useContext(CanManage)
