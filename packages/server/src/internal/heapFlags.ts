/**
 * Whether node was started with an allocation-site pretenuring flag of its own (`--[no-]allocation-
 * site-pretenuring`, in its arguments or `NODE_OPTIONS`), which the server then leaves alone.
 */
export const pretenuringChosen = (execArgv: ReadonlyArray<string>, nodeOptions: string | undefined): boolean =>
  [...execArgv, ...(nodeOptions ?? "").split(/\s+/)].some((flag) =>
    /^--(no-)?allocation[-_]site[-_]pretenuring$/.test(flag)
  )
