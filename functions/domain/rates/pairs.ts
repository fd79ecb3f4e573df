/** FX pairs as policies, catalogs and sources write them. */

/** `EUR->USD` and `EUR→USD` are the same pair; rates are published as `EUR→USD`. */
export const canonicalPair = (pair: string): string => pair.replace('->', '→');

/** Rates by canonical pair (of two rates listed for one pair, the later one). */
export const ratesByPair = <R extends { readonly pair: string }>(rates: readonly R[]): Map<string, R> =>
  new Map(rates.map((rate) => [canonicalPair(rate.pair), rate]));

/** The first rate listed for `pair`, whichever way either is spelled. */
export const rateOfPair = <R extends { readonly pair: string }>(
  rates: readonly R[],
  pair: string,
): R | undefined => {
  const wanted = canonicalPair(pair);
  return rates.find((rate) => canonicalPair(rate.pair) === wanted);
};
