/**
 * Collector `backup`: repositories of the Backup service per state (active, archived, imported), an info
 * series and the health of each, the next scheduled task, and — for active repositories — the end time of the
 * last successful task from its task history.
 *
 * The service is found at `backup_url`, else from nodeServices (`backupAPI` / `backupAPIHTTPS`); a cluster
 * without it is not applicable (success, no series). A 404 from the service (a list or a repository that is
 * gone) is skipped, logged at debug and counted. Each state's list and each task history is an item: one that
 * fails otherwise (4xx/5xx, time-out, bad body) costs only its own series and is counted in
 * `cbwatch_collector_item_errors_total`; the poll fails when every state's list fails. The archive operation
 * is an administrator's action and is never called.
 */
import { defineFamily } from '../metrics/family.js';
import type { FamilyDef, SampleSet } from '../metrics/family.js';
import { REPOSITORIES_ROUTE, REPOSITORY_STATES, repositoryListSchema, repositorySchema, TASK_HISTORY_ROUTE, taskHistorySchema } from '../couchbase/backup.js';
import type { Repository, RepositoryState, TaskHistory } from '../couchbase/backup.js';
import { allowedCredentialHosts, fetchNodeServices, serviceUrl } from '../couchbase/nodeServices.js';
import { MAX_INVALID_SHOWN, notAnObject } from '../couchbase/source.js';
import { CbwError, summariseIssues } from '../errors.js';
import { collectItems, isoToSeconds, ItemTally } from './helpers.js';
import type { ItemSink } from './helpers.js';
import type { Collector, Skip } from './types.js';

const C = 'backup';

/** Task history entries read per active repository: enough to find the last success behind a few failures. */
export const TASK_HISTORY_LIMIT = 20;

export const F = {
  repositories: defineFamily(C, 'couchbase_backup_repositories', 'gauge', 'Backup repositories per state (active, archived, imported).', ['state'], 'count'),
  info: defineFamily(
    C,
    'couchbase_backup_repository_info',
    'gauge',
    'A backup repository: its list (state), the status it reports (active, paused, …), its plan and bucket; always 1.',
    ['repository', 'state', 'status', 'plan', 'bucket'],
    'info',
  ),
  healthy: defineFamily(C, 'couchbase_backup_repository_healthy', 'gauge', 'Whether the Backup service reports the repository healthy.', ['repository', 'state']),
  nextRun: defineFamily(
    C,
    'couchbase_backup_repository_next_run_timestamp_seconds',
    'gauge',
    'When the next scheduled task of the repository runs (the earliest over its scheduled tasks).',
    ['repository', 'state'],
    'timestamp_seconds',
  ),
  lastSuccess: defineFamily(
    C,
    'couchbase_backup_repository_last_success_timestamp_seconds',
    'gauge',
    `End time of the repository's last successful task within its last ${TASK_HISTORY_LIMIT} tasks.`,
    ['repository', 'state'],
    'timestamp_seconds',
  ),
} as const satisfies Record<string, FamilyDef>;

/**
 * One state's list → samples; returns the repositories that parsed. Pure. Each repository is an item: one that
 * does not parse is reported to `items` as failed (skipped when no sink is given).
 */
export function mapRepositories(state: RepositoryState, list: readonly unknown[], out: SampleSet, skip: Skip, items?: ItemSink): Repository[] {
  const repos: Repository[] = [];
  // The first few bad entries are described one by one, the rest counted as one report.
  let described = 0;
  let counted = 0;
  for (const [i, raw] of list.entries()) {
    const wrong = notAnObject(raw);
    const r = wrong === undefined ? repositorySchema.safeParse(raw) : undefined;
    if (r === undefined || !r.success) {
      if (items && described >= MAX_INVALID_SHOWN) {
        counted++;
        continue;
      }
      described++;
      const id = (raw as { id?: unknown } | null)?.id;
      const item = `${state} repository ${typeof id === 'string' ? id.slice(0, 60) : `#${i}`}`;
      if (items) items.failed(item, new CbwError('CBW_ERR_SCHEMA', `GET ${REPOSITORIES_ROUTE}: ${item}: ${r === undefined ? wrong : summariseIssues(r.error.issues)}`));
      else skip('repository_unparseable', state);
      continue;
    }
    repos.push(r.data);
  }
  if (counted > 0) items?.failed(`${counted} more ${state} repositories`, new CbwError('CBW_ERR_SCHEMA', `GET ${REPOSITORIES_ROUTE}: ${counted} more ${state} entries do not parse`), counted);
  out.add(F.repositories, { state }, repos.length);
  for (const r of repos) {
    const labels = { repository: r.id, state };
    out.add(F.info, { ...labels, status: r.state ?? '', plan: r.plan_name ?? '', bucket: r.bucket?.name ?? '' }, 1);
    out.add(F.healthy, labels, r.health?.healthy);
    const next = Object.values(r.scheduled ?? {})
      .map((t) => isoToSeconds(t.next_run))
      .filter((v): v is number => v !== undefined);
    if (next.length > 0) out.add(F.nextRun, labels, Math.min(...next));
  }
  return repos;
}

/** The end of the latest successful (`done`) task, in seconds, or undefined. Pure. */
export function lastSuccess(history: TaskHistory): number | undefined {
  let best: number | undefined;
  for (const t of history) {
    if (t.status !== 'done') continue;
    const end = isoToSeconds(t.end);
    if (end !== undefined && (best === undefined || end > best)) best = end;
  }
  return best;
}

export const backupCollector: Collector<'backup'> = {
  name: 'backup',
  defaultInterval: 300_000,
  families: Object.values(F),
  role: 'ro_admin',
  description: 'Backup service repositories per state, their health, next scheduled run and last successful task.',
  async collect(ctx) {
    const only = ctx.cluster.credentialsHosts === 'configured' ? allowedCredentialHosts(ctx.cluster) : undefined;
    const baseUrl = ctx.cluster.backupUrl ?? serviceUrl(await fetchNodeServices(ctx), ctx.cluster.url, 'backupAPI', 'backupAPIHTTPS', only);
    if (baseUrl === undefined) {
      ctx.notApplicable('no backup service');
      return;
    }
    const skip: Skip = (reason, detail) => ctx.skipped(reason, detail);
    const active: Repository[] = [];
    // The lists are fetched together and mapped in state order, so the output does not depend on timing.
    const lists = new Map<RepositoryState, readonly unknown[]>();
    await collectItems(
      ctx,
      REPOSITORY_STATES,
      (state) => `${state} repositories`,
      async (state) => {
        const res = await ctx.client.requestJson(REPOSITORIES_ROUTE, { state }, repositoryListSchema, { baseUrl, allowStatus: [404] });
        if (res.data === undefined) {
          ctx.log.debug({ state, status: res.status }, 'backup repository list not found');
          ctx.skipped('backup_not_found', state);
          return;
        }
        lists.set(state, res.data);
      },
    );
    // Repositories that do not parse are item errors, but do not fail the poll: their lists were read.
    const entries = new ItemTally(ctx);
    for (const state of REPOSITORY_STATES) {
      const list = lists.get(state);
      if (list === undefined) continue;
      const repos = mapRepositories(state, list, ctx.out, skip, entries);
      if (state === 'active') active.push(...repos);
    }
    // Task histories are items too, but never fail the poll: the lists said what there is.
    const histories = new ItemTally(ctx);
    for (const r of active) {
      await histories.run(`repository ${r.id} task history`, async () => {
        const res = await ctx.client.requestJson(TASK_HISTORY_ROUTE, { repository: r.id }, taskHistorySchema, {
          baseUrl,
          query: { limit: TASK_HISTORY_LIMIT },
          allowStatus: [404],
        });
        if (res.data === undefined) {
          // Deleted or archived since the list was read.
          ctx.log.debug({ repository: r.id }, 'backup task history not found');
          ctx.skipped('backup_not_found', r.id);
          return;
        }
        ctx.out.add(F.lastSuccess, { repository: r.id, state: 'active' }, lastSuccess(res.data));
      });
    }
  },
};
