/**
 * Collector `tasks`: rebalance state and progress, and the progress of every other cluster task (compaction,
 * index builds, sample loading…) from GET /pools/default/tasks. The list is fetched through the shared
 * `fetchTaskList` so that the `xdcr` collector, which owns the XDCR entries, reuses the same answer; XDCR entries
 * are ignored here.
 *
 * Couchbase reports progress in percent; it is exported as a 0–1 ratio. Per-node rebalance progress is keyed
 * by Erlang node name (`ns_1@host`); it is translated to the `host:port` node label (the `nodes` collector's)
 * through the `otpNode` → `hostname` pairs of GET /pools/default while a rebalance runs (and only then, to keep
 * the 15 s poll to one request; the answer is shared with the `nodes` collector).
 */
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { fetchPoolsDefault, POOLS_DEFAULT_ROUTE, poolNodeSchema } from '../couchbase/pools.js';
import type { PoolsDefault } from '../couchbase/pools.js';
import { fetchTaskList, TASKS_ROUTE } from '../couchbase/tasks.js';
import type { Task } from '../couchbase/tasks.js';
import { CbwError } from '../errors.js';
import { ItemTally, oneHot } from './helpers.js';
import type { Collector } from './types.js';

const C = 'tasks';

export const REBALANCE_STATUSES = ['running', 'notRunning', 'failed'] as const;

export const F = {
  running: defineFamily(C, 'couchbase_rebalance_running', 'gauge', 'Whether a rebalance (or graceful failover) is running.'),
  progress: defineFamily(C, 'couchbase_rebalance_progress_ratio', 'gauge', 'Progress of the running rebalance (0-1).', [], 'ratio'),
  nodeProgress: defineFamily(C, 'couchbase_rebalance_node_progress_ratio', 'gauge', 'Progress of the running rebalance on each node (0-1).', ['node'], 'ratio'),
  status: defineFamily(
    C,
    'couchbase_rebalance_status',
    'gauge',
    'Rebalance task state, one-hot over running, notRunning and failed (not running, with the error message of the last rebalance present).',
    ['status'],
  ),
  stale: defineFamily(C, 'couchbase_rebalance_status_stale', 'gauge', 'Whether the cluster manager marks the rebalance status as stale (the orchestrator did not answer).'),
  taskProgress: defineFamily(
    C,
    'couchbase_task_progress_ratio',
    'gauge',
    'Progress of running non-rebalance tasks (compaction, index builds, …) per task type and bucket (0-1); the mean when several tasks share the labels.',
    ['task_type', 'bucket'],
    'ratio',
  ),
  tasks: defineFamily(C, 'couchbase_tasks', 'gauge', 'Tasks listed by the cluster (XDCR excluded) per task type and status.', ['task_type', 'status'], 'count'),
} as const satisfies Record<string, FamilyDef>;

/** `ns_1@host` → `host:port`, from the node list of GET /pools/default. */
export function otpNodeNames(p: PoolsDefault): Map<string, string> {
  const m = new Map<string, string>();
  for (const raw of p.nodes) {
    const n = poolNodeSchema.safeParse(raw);
    if (n.success && n.data.otpNode !== undefined) m.set(n.data.otpNode, n.data.hostname);
  }
  return m;
}

function nodeLabel(otp: string, names: Map<string, string> | undefined): string {
  return names?.get(otp) ?? otp.replace(/^[^@]*@/, '');
}

function ratio(percent: number | undefined): number | undefined {
  if (percent === undefined || !Number.isFinite(percent)) return undefined;
  return Math.min(1, Math.max(0, percent / 100));
}

/** The rebalance entry's state: Couchbase's status, or `failed` when it is not running and carries an error. */
export function rebalanceStatus(t: Task): string | undefined {
  if (t.status === undefined) return undefined;
  if (t.status !== 'running' && t.errorMessage !== undefined && t.errorMessage !== '') return 'failed';
  return t.status;
}

/**
 * Tasks list → samples. Pure; `names` maps `ns_1@host` names to node labels when known; `null` means the
 * lookup failed, and then no per-node progress is exported (a bare host would not join with `node` elsewhere).
 */
export function mapTasks(tasks: readonly Task[], out: SampleSet, names?: Map<string, string> | null): void {
  const counts = new Map<string, { task_type: string; status: string; n: number }>();
  const progress = new Map<string, { task_type: string; bucket: string; sum: number; n: number }>();
  for (const t of tasks) {
    if (t.type === 'xdcr') continue;
    const status = t.type === 'rebalance' ? (rebalanceStatus(t) ?? 'unknown') : (t.status ?? 'unknown');
    const ck = `${t.type}\u0000${status}`;
    const c = counts.get(ck) ?? { task_type: t.type, status, n: 0 };
    c.n++;
    counts.set(ck, c);
    if (t.type === 'rebalance') {
      const running = t.status === 'running';
      out.add(F.running, {}, running);
      oneHot(out, F.status, {}, 'status', REBALANCE_STATUSES, rebalanceStatus(t));
      out.add(F.stale, {}, t.statusIsStale);
      if (running) {
        out.add(F.progress, {}, ratio(t.progress));
        if (names !== null) for (const [otp, p] of Object.entries(t.perNode ?? {})) out.add(F.nodeProgress, { node: nodeLabel(otp, names) }, ratio(p.progress));
      }
      continue;
    }
    const r = ratio(t.progress);
    if (r === undefined) continue;
    const bucket = t.bucket ?? '';
    const pk = `${t.type}\u0000${bucket}`;
    const p = progress.get(pk) ?? { task_type: t.type, bucket, sum: 0, n: 0 };
    p.sum += r;
    p.n++;
    progress.set(pk, p);
  }
  for (const p of progress.values()) out.add(F.taskProgress, { task_type: p.task_type, bucket: p.bucket }, p.sum / p.n);
  for (const c of counts.values()) out.add(F.tasks, { task_type: c.task_type, status: c.status }, c.n);
}

export const tasksCollector: Collector<'tasks'> = {
  name: 'tasks',
  defaultInterval: 15_000,
  families: Object.values(F),
  role: 'ro_admin',
  description: 'Rebalance state and progress (overall and per node), and the progress of compaction, index builds and other tasks.',
  async collect(ctx) {
    // The list is the poll's request; each entry, and the node-name lookup during a rebalance, is an item.
    const { tasks, invalid, invalidCount } = await fetchTaskList(ctx);
    const tally = new ItemTally(ctx);
    // The entries past the first few described are counted first, so that a poll all of whose entries fail
    // gives a described one as its reason.
    const rest = invalidCount - invalid.length;
    if (rest > 0) tally.failed(`${rest} more task entries`, new CbwError('CBW_ERR_SCHEMA', `GET ${TASKS_ROUTE}: ${rest} more entries do not parse`), rest);
    for (const bad of invalid) {
      const item = `task ${bad.index}${bad.name !== undefined ? ` (${bad.name.slice(0, 40)})` : ''}`;
      tally.failed(item, new CbwError('CBW_ERR_SCHEMA', `GET ${TASKS_ROUTE}: ${item}: ${bad.message}${rest > 0 ? ` (and ${invalidCount - 1} more entries do not parse)` : ''}`));
    }
    for (const t of tasks) tally.ok(t.type);
    const rebalancing = tasks.some((t) => t.type === 'rebalance' && t.status === 'running' && t.perNode !== undefined);
    let names: Map<string, string> | null | undefined;
    if (rebalancing) {
      await tally.run(`${POOLS_DEFAULT_ROUTE} (node names)`, async () => {
        names = otpNodeNames(await fetchPoolsDefault(ctx));
      });
      // Per-node progress is then left out: labelled by bare host it would not join with any other `node`.
      names ??= null;
    }
    mapTasks(tasks, ctx.out, names);
    tally.settle();
  },
};
