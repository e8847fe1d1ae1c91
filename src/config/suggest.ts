/** "Did you mean": the nearest known name to a mistyped flag or key. */

/**
 * The known name nearest to `name`, for "did you mean"; none when nothing is close: at most one edit per three
 * characters typed (at least one, at most three), a swap of two neighbours counting as one. `--bogus` is 3 edits
 * from `--nodes`, too far for 5 characters; `--config.chek` is one from `--config.check`.
 */
export function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Math.min(3, Math.max(1, Math.floor(name.length / 3))) + 1;
  for (const k of known) {
    const d = editDistance(name, k);
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours, each 1. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => (d[i] as number[])[j] as number;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = v;
    }
  }
  return at(a.length, b.length);
}
