/**
 * The order of names (Search index names, cluster names, the landing page's problems): by UTF-16 code unit, as
 * Array.prototype.sort orders strings by default, the same on every machine.
 *
 * Not localeCompare: its order follows the process's locale (LANG, LC_ALL), so two replicas could list the same
 * series in two orders, and its first call in each thread builds a collator from ICU's data, which kept 2.3 MB
 * more of the node binary resident at the realistic scenario (bench/RESULTS.md, "Footprint, tenth round").
 */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
