/**
 * Whether node was started with an allocation-site pretenuring flag of its own
 * (`--[no-]allocation-site-pretenuring`; node refuses it in `NODE_OPTIONS`), which the server then
 * leaves alone.
 */
export const pretenuringChosen = (execArgv: ReadonlyArray<string>): boolean =>
  execArgv.some((flag) => /^--(no-)?allocation[-_]site[-_]pretenuring$/.test(flag))
