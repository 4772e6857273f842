/**
 * Reading whole response documents back: a page from a `LIMIT n + 1` read of `document` rows,
 * each decoded, the extra row telling that there is more.
 */
export const pageOfDocuments =
  <A, P>(decode: (document: unknown) => A, makePage: (items: ReadonlyArray<A>, limit: number) => P, limit: number) =>
  (rows: ReadonlyArray<{ readonly document: unknown }>): P =>
    makePage(
      rows.map((row) => decode(row.document)),
      limit
    )
