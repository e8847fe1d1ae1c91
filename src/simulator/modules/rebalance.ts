/**
 * Rebalance and compaction entries of GET /pools/default/tasks (through `addTaskProvider`), in the shapes of
 * pools-default-tasks/docs-server-6.5plus-rebalance-running-1.json, …-rebalance-notRunning-lastReportURI.json,
 * …-rebalance-failed.json and …-bucket-compaction.json.
 *
 * Scenarios (simulated time):
 * - `default`: rebalance notRunning (with a lastReportURI), nothing else.
 * - `demo`: a rebalance that runs for 10 minutes out of every 15 (progress 0 → 100 %, per node at slightly
 *   different speeds), and a compaction of the first bucket whose progress cycles every 5 minutes.
 * - `incident`: the last rebalance failed (notRunning with an errorMessage).
 * Knob `rebalanceRunning` (boolean) forces a running rebalance (true) or none (false) in any scenario.
 * The cluster module reads `rebalanceState()` for `rebalanceStatus` and the rebalance counters.
 */
import type { SimContext, SimModule } from '../types.js';
import { addTaskProvider } from './tasks.js';

const CYCLE_S = 900;
const RUN_S = 600;

export interface RebalanceState {
  running: boolean;
  /** 0–100 while running. */
  progress: number;
  failed: boolean;
  /** Rebalances started since the simulator started (the running one included). */
  started: number;
}

export function rebalanceState(ctx: SimContext): RebalanceState {
  const knob = ctx.options.knobs.rebalanceRunning;
  const elapsed = Math.max(0, (ctx.now() - ctx.startedAt) / 1000);
  const scenario = ctx.options.scenario;
  const cycling = knob === true || (knob !== false && scenario === 'demo');
  if (cycling) {
    const inCycle = elapsed % CYCLE_S;
    const running = inCycle < RUN_S;
    return { running, progress: running ? (100 * inCycle) / RUN_S : 0, failed: false, started: Math.floor(elapsed / CYCLE_S) + 1 };
  }
  return { running: false, progress: 0, failed: scenario === 'incident', started: 0 };
}

function otp(hostname: string): string {
  return `ns_1@${hostname.replace(/:\d+$/, '')}`;
}

export const rebalanceModule: SimModule = (_app, ctx) => {
  addTaskProvider(ctx, () => {
    const r = rebalanceState(ctx);
    const out: unknown[] = [];
    if (r.running) {
      const perNode: Record<string, { progress: number }> = {};
      ctx.nodes.forEach((n, i) => {
        perNode[otp(n.hostname)] = { progress: Math.min(100, r.progress * (0.9 + 0.1 * i)) };
      });
      const bucket = ctx.buckets[0]?.name ?? 'default';
      out.push({
        statusId: 'cbsim-rebalance',
        type: 'rebalance',
        subtype: 'rebalance',
        recommendedRefreshPeriod: 0.25,
        status: 'running',
        progress: r.progress,
        perNode,
        detailedProgress: { bucket, bucketNumber: 1, bucketsCount: ctx.buckets.length },
        rebalanceId: 'b9a087fb3533d6ada22a1c43d8d09e24',
        masterNode: otp(ctx.nodes[0]?.hostname ?? '127.0.0.1'),
      });
    } else if (r.failed) {
      out.push({
        statusId: 'cbsim-rebalance',
        type: 'rebalance',
        status: 'notRunning',
        errorMessage: 'Rebalance failed. See logs for detailed reason. You can try rebalance again.',
      });
    } else {
      out.push({
        statusId: 'cbsim-rebalance',
        type: 'rebalance',
        subtype: 'rebalance',
        status: 'notRunning',
        statusIsStale: false,
        masterRequestTimedOut: false,
        lastReportURI: '/logs/rebalanceReport?reportID=0c41dba637a8971b1aa921a89e851d83',
      });
    }
    const first = ctx.buckets[0];
    if (ctx.options.scenario === 'demo' && first) {
      const elapsed = Math.max(0, (ctx.now() - ctx.startedAt) / 1000);
      const total = 682;
      const done = Math.floor((total * (elapsed % 300)) / 300);
      out.push({
        cancelURI: `/pools/default/buckets/${encodeURIComponent(first.name)}/controller/cancelBucketCompaction`,
        type: 'bucket_compaction',
        recommendedRefreshPeriod: 2,
        status: 'running',
        bucket: first.name,
        changesDone: done,
        totalChanges: total,
        progress: Math.floor((100 * done) / total),
      });
    }
    return out;
  });
};
