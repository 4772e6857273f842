/** A packed package: its name, version and tarball. */
export interface Packed {
  readonly name: string
  readonly version: string
  readonly tarball: string
}
/** Every publishable package of the workspace, in `packages/`. */
export declare const packageDirectories: () => ReadonlyArray<string>
/** Runs `npm run build`, then `npm pack` of every package into `destination`. */
export declare const packAll: (destination: string) => ReadonlyArray<Packed>
//# sourceMappingURL=pack.d.ts.map
