/**
 * Knob `statChurnPerAnswer` (a number, default 0): every answer that carries stats named by Couchbase — a
 * bucket's stats envelope (whole bucket or one node), and /pools/default's `counters` and each node's
 * `interestingStats` — also carries that many stat names it never sent before (`churn_<n>`, n counting up over
 * the simulator's life). A broken or hostile cluster doing this must not make the exporter's memory grow
 * without bound; the churn test and soak use it.
 */
import type { SimContext } from './types.js';

/** The next `statChurnPerAnswer` never-seen names (none when the knob is off). */
export function churnNames(ctx: SimContext): string[] {
  const per = ctx.options.knobs.statChurnPerAnswer;
  if (typeof per !== 'number' || per <= 0) return [];
  const seq = ctx.area('statChurn', () => ({ next: 0 }));
  const out = new Array<string>(per);
  for (let i = 0; i < per; i++) out[i] = `churn_${seq.next++}`;
  return out;
}
