/** The annotation of a request schema (body or query) that reports all of its problems, not the first. */
export const allErrors = { parseOptions: { errors: "all" as const } }
