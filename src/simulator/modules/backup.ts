/**
 * The Backup service REST API on the simulator's own port (nodeServices advertises `backupAPI` there for the
 * node answering), read-only: GET /api/v1/cluster/self, GET /api/v1/cluster/self/repository/:state and
 * GET /api/v1/cluster/self/repository/active/:repo/taskHistory. Shapes follow
 * backup-repository-active-name/docs-server-7.0plus-restRepo.json, backup-cluster-self/ and
 * backup-task-history/docs-server-7.6plus.json. There is deliberately no archive route.
 *
 * Scenarios (simulated time):
 * - `default`: one active repository (hourly plan on the first bucket, last backup at the top of the hour) and
 *   one archived repository.
 * - `demo`: as default, plus a paused active repository on the second bucket whose last success was 3 days
 *   ago, and an imported repository.
 * - `incident`: as default, but the active repository is unhealthy (bucket UUID mismatch) and its last two
 *   backups failed.
 * When no node runs the backup service, every route answers 404.
 */
import type { SimContext, SimModule } from '../types.js';

const HOUR = 3_600_000;

interface SimRepo {
  id: string;
  state: 'active' | 'archived' | 'imported';
  status: string;
  bucket: string | undefined;
  plan: string;
  healthy: boolean;
  /** Simulated ms of the last successful backup, or undefined. */
  lastSuccess: number | undefined;
  failedSince: number;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function repos(ctx: SimContext): SimRepo[] {
  const now = ctx.now();
  const top = now - (now % HOUR);
  const s = ctx.options.scenario;
  const first = ctx.buckets[0]?.name;
  const out: SimRepo[] = [
    {
      id: 'hourlyBackups',
      state: 'active',
      status: 'active',
      bucket: first,
      plan: '_hourly_backups',
      healthy: s !== 'incident',
      lastSuccess: s === 'incident' ? top - 2 * HOUR : top,
      failedSince: s === 'incident' ? 2 : 0,
    },
    { id: 'oldRepo2023', state: 'archived', status: 'archived', bucket: first, plan: '_daily_backups', healthy: true, lastSuccess: undefined, failedSince: 0 },
  ];
  if (s === 'demo') {
    out.push(
      { id: 'weeklyFull', state: 'active', status: 'paused', bucket: ctx.buckets[1]?.name, plan: 'BackupAndMergePlan', healthy: true, lastSuccess: top - 72 * HOUR, failedSince: 0 },
      { id: 'mergedRepo', state: 'imported', status: 'imported', bucket: undefined, plan: '', healthy: true, lastSuccess: undefined, failedSince: 0 },
    );
  }
  return out;
}

function repoBody(ctx: SimContext, r: SimRepo): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: r.id,
    plan_name: r.plan,
    state: r.status,
    archive: `/backups/${r.id}`,
    repo: `${r.id}-${Math.floor(ctx.rand(`repo:${r.id}`) * 1e8).toString(16)}`,
    version: 1,
    creation_time: iso(ctx.startedAt - 30 * 24 * HOUR),
    update_time: iso(ctx.startedAt - 24 * HOUR),
  };
  const b = ctx.buckets.find((x) => x.name === r.bucket);
  if (b) body.bucket = { name: b.name, uuid: b.uuid };
  if (r.state !== 'active') return body;
  body.health = r.healthy ? { healthy: true } : { healthy: false, health_issue: `cannot verify bucket exists: bucket UUIDs don't match` };
  if (r.status === 'active') {
    const now = ctx.now();
    body.scheduled = {
      backup_hourly: { name: 'backup_hourly', task_type: 'BACKUP', next_run: iso(now - (now % HOUR) + HOUR) },
      merge_week: { name: 'merge_week', task_type: 'MERGE', next_run: iso(now - (now % (24 * HOUR)) + 24 * HOUR) },
    };
  }
  return body;
}

function taskEntry(status: 'done' | 'failed', end: number): Record<string, unknown> {
  const start = end - 6_000;
  return {
    task_name: 'backup_hourly',
    status,
    start: iso(start),
    end: iso(end),
    node_runs: [{ node_id: '1a41682a59f40d3932d2cf7b131a2312', status, start: iso(start), end: iso(end), progress: status === 'done' ? 100 : 37, error_code: status === 'done' ? 0 : 1 }],
    error_code: status === 'done' ? 0 : 1,
    type: 'BACKUP',
  };
}

export const backupModule: SimModule = (app, ctx) => {
  const available = (): boolean => ctx.nodes.some((n) => n.services.includes('backup'));
  const notFound = { status: 404, msg: 'requested resource not found' };

  app.get('/api/v1/cluster/self', async (_req, reply) => {
    if (!available()) return reply.code(404).send(notFound);
    const byState = (state: SimRepo['state']): Record<string, unknown> =>
      Object.fromEntries(repos(ctx).filter((r) => r.state === state).map((r) => [r.id, repoBody(ctx, r)]));
    return { name: 'self', active: byState('active'), archived: byState('archived'), imported: byState('imported') };
  });

  app.get('/api/v1/cluster/self/repository/:state', async (req, reply) => {
    const { state } = req.params as { state: string };
    if (!available() || !['active', 'archived', 'imported'].includes(state)) return reply.code(404).send(notFound);
    return repos(ctx)
      .filter((r) => r.state === state)
      .map((r) => repoBody(ctx, r));
  });

  app.get('/api/v1/cluster/self/repository/active/:repo/taskHistory', async (req, reply) => {
    const { repo } = req.params as { repo: string };
    const r = repos(ctx).find((x) => x.state === 'active' && x.id === repo);
    if (!available() || !r) return reply.code(404).send({ status: 404, msg: `no active repository with id ${repo} found` });
    const limit = Math.max(1, Math.min(100, Number((req.query as { limit?: string }).limit ?? 20) || 20));
    const now = ctx.now();
    const top = now - (now % HOUR);
    const tasks: unknown[] = [];
    for (let i = 0; i < r.failedSince; i++) tasks.push(taskEntry('failed', top - i * HOUR + 6_000));
    if (r.lastSuccess !== undefined) for (let i = 0; tasks.length < limit && i < 48; i++) tasks.push(taskEntry('done', r.lastSuccess - i * HOUR + 6_000));
    return tasks.slice(0, limit);
  });
};
