import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backupCollector, lastSuccess } from '../../src/collectors/backup.js';
import { createClient } from '../../src/couchbase/client.js';
import { taskHistorySchema } from '../../src/couchbase/backup.js';
import { createSimulator } from '../../src/simulator/index.js';
import { collect, fakeClient, fixtureText, loadFixture, simulatorWithClient } from '../helpers/collect.js';
import { missing, requireBinary } from '../helpers/tools.js';

/** Checked once: a missing promtool skips its tests visibly (and fails under CI=true), never silently. */
const PROMTOOL = requireBinary('promtool');

const LIST = '/api/v1/cluster/self/repository/{state}';
const HISTORY = '/api/v1/cluster/self/repository/active/{repository}/taskHistory';
const NS = '/pools/default/nodeServices';
const BACKUP_URL = 'http://cb.test:8097';

/**
 * The docs elide the repository lists ('.' lines), but their first entries and the repositories inside
 * GET /api/v1/cluster/self are complete objects: cut them out by brace matching, byte for byte.
 */
function completeObject(text: string, from: number): unknown {
  const start = text.indexOf('{', from);
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return JSON.parse(text.slice(start, i + 1));
  }
  throw new Error('unbalanced');
}
const clusterSelf = fixtureText('backup-cluster-self/docs-server-7.6plus.elided.json');
const activeList = fixtureText('backup-repository-active/docs-server-7.6plus-list.elided.json');
const REPOS = {
  active: [
    loadFixture('backup-repository-active-name/docs-server-7.0plus-restRepo.json'),
    completeObject(activeList, activeList.indexOf('[')),
    completeObject(clusterSelf, clusterSelf.indexOf('"hourlyBackupRepo"')),
  ],
  archived: [] as unknown[],
  imported: [completeObject(clusterSelf, clusterSelf.indexOf('"mergedRepo"'))],
};
const HISTORY_FIXTURE = loadFixture('backup-task-history/docs-server-7.6plus.json');

function routes(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    [LIST]: (p: Record<string, string>) => REPOS[p.state as keyof typeof REPOS],
    [HISTORY]: HISTORY_FIXTURE,
    ...extra,
  };
}

describe('backup collector on real fixtures', () => {
  it('matches the golden exposition for the docs repositories (active, paused+unhealthy, imported) and task history', async () => {
    const client = fakeClient(routes());
    const r = await collect(backupCollector, client, { cluster: { backupUrl: BACKUP_URL } });
    expect(r.ok, String(r.error)).toBe(true);
    await expect(r.text).toMatchFileSnapshot('../golden/backup.prom');
    expect(client.calls.every((c) => c.options.baseUrl === BACKUP_URL)).toBe(true);
    // Never the archive operation: GETs only.
    expect(client.calls.every((c) => (c.options.method ?? 'GET') === 'GET' && !/\/archive(\?|$)/.test(c.path))).toBe(true);
    expect(client.calls.filter((c) => c.route === HISTORY).map((c) => [c.params.repository, c.options.query?.limit])).toEqual([
      ['restRepo', 20],
      ['bestRepo', 20],
      ['hourlyBackupRepo', 20],
    ]);
  });

  it('exports states, health, the paused status and the last success from the task history', async () => {
    const r = await collect(backupCollector, fakeClient(routes()), { cluster: { backupUrl: BACKUP_URL } });
    expect(r.set.get('couchbase_backup_repositories', { state: 'active' })).toBe(3);
    expect(r.set.get('couchbase_backup_repositories', { state: 'archived' })).toBe(0);
    expect(r.set.get('couchbase_backup_repositories', { state: 'imported' })).toBe(1);
    expect(r.set.get('couchbase_backup_repository_healthy', { repository: 'hourlyBackupRepo', state: 'active' })).toBe(0);
    expect(r.set.get('couchbase_backup_repository_healthy', { repository: 'mergedRepo', state: 'imported' })).toBeUndefined();
    expect(r.set.get('couchbase_backup_repository_info', { repository: 'hourlyBackupRepo', state: 'active', status: 'paused', plan: 'hourlyBackupRepo', bucket: 'travel-sample' })).toBe(1);
    expect(r.set.get('couchbase_backup_repository_last_success_timestamp_seconds', { repository: 'restRepo' })).toBeCloseTo(Date.parse('2024-05-06T17:24:28.901Z') / 1000, 3);
    expect(r.set.get('couchbase_backup_repository_next_run_timestamp_seconds', { repository: 'restRepo' })).toBe(Date.parse('2020-10-02T09:00:41+01:00') / 1000);
  });

  it('takes the latest done task, ignoring failed, running and Go zero-time entries', () => {
    const h = taskHistorySchema.parse([
      { status: 'failed', end: '2024-05-07T00:00:00Z' },
      { status: 'running', end: '0001-01-01T00:00:00Z' },
      { status: 'done', end: '2024-05-06T00:00:00Z' },
      { status: 'done', end: '2024-05-05T00:00:00Z' },
      { status: 'done', end: '0001-01-01T00:00:00Z' },
    ]);
    expect(lastSuccess(h)).toBe(Date.parse('2024-05-06T00:00:00Z') / 1000);
    expect(lastSuccess(taskHistorySchema.parse([{ status: 'failed', end: '2024-05-07T00:00:00Z' }]))).toBeUndefined();
  });

  it('handles a 404 from the backup service (list or task history): skipped, counted, the rest kept', async () => {
    const r = await collect(
      backupCollector,
      fakeClient(
        routes({
          [LIST]: (p: Record<string, string>) => (p.state === 'imported' ? { status: 404, body: { status: 404, msg: 'not found' } } : REPOS[p.state as keyof typeof REPOS]),
          [HISTORY]: (p: Record<string, string>) => (p.repository === 'bestRepo' ? { status: 404, body: { status: 404, msg: 'no active repository with id bestRepo found' } } : HISTORY_FIXTURE),
        }),
      ),
      { cluster: { backupUrl: BACKUP_URL } },
    );
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.skipped.get('backup_not_found')).toBe(2);
    expect(r.set.get('couchbase_backup_repositories', { state: 'imported' })).toBeUndefined();
    expect(r.set.get('couchbase_backup_repositories', { state: 'active' })).toBe(3);
    expect(r.set.get('couchbase_backup_repository_last_success_timestamp_seconds', { repository: 'bestRepo' })).toBeUndefined();
    expect(r.set.get('couchbase_backup_repository_last_success_timestamp_seconds', { repository: 'restRepo' })).toBeGreaterThan(0);
  });

  it('skips a repository entry that does not parse, and emits nothing for missing fields', async () => {
    const r = await collect(
      backupCollector,
      fakeClient(routes({ [LIST]: (p: Record<string, string>) => (p.state === 'active' ? [{ id: 'bare' }, { plan_name: 'no id' }, 'x'] : []), [HISTORY]: [] })),
      { cluster: { backupUrl: BACKUP_URL } },
    );
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.itemErrors.get('bad_body')).toBe(2);
    expect(r.set.get('couchbase_backup_repository_info', { repository: 'bare', state: 'active', status: '', plan: '', bucket: '' })).toBe(1);
    expect(r.set.get('couchbase_backup_repository_healthy', { repository: 'bare' })).toBeUndefined();
    expect(r.set.get('couchbase_backup_repository_next_run_timestamp_seconds', { repository: 'bare' })).toBeUndefined();
    expect(r.set.get('couchbase_backup_repository_last_success_timestamp_seconds', { repository: 'bare' })).toBeUndefined();
  });

  it('finds the service from nodeServices, and is not applicable without one', async () => {
    const withBackup = fakeClient({ ...routes(), [NS]: { nodesExt: [{ services: { mgmt: 8091, backupAPI: 8097, backupAPIHTTPS: 18097 }, thisNode: true }] } });
    const r = await collect(backupCollector, withBackup);
    expect(r.ok, String(r.error)).toBe(true);
    expect(withBackup.calls.find((c) => c.route === LIST)?.options.baseUrl).toBe('http://cb.test:8097');
    const none = await collect(backupCollector, fakeClient({ [NS]: loadFixture('pools-default-nodeServices/docs-server-6.5plus.json') }));
    expect(none.ok).toBe(true);
    expect(none.notApplicable).toBe('no backup service');
    expect(none.set.size).toBe(0);
  });

  it('fails the poll on an HTTP error other than 404, or bad JSON', async () => {
    for (const answer of [{ status: 500, text: 'x' }, { fail: 'invalid_json' as const }, { status: 403, body: { permissions: ['cluster.backup!read'] } }]) {
      const r = await collect(backupCollector, fakeClient(routes({ [LIST]: answer })), { cluster: { backupUrl: BACKUP_URL } });
      expect(r.ok).toBe(false);
    }
  });

  it.skipIf(PROMTOOL === undefined)('golden file passes promtool check metrics', () => {
    const promtool = PROMTOOL as string;
    const input = readFileSync(join(import.meta.dirname, '..', 'golden', 'backup.prom'));
    expect(execFileSync(promtool, ['check', 'metrics'], { input, encoding: 'utf8' })).toBe('');
  });
});

describe('backup collector against the simulator', () => {
  const t = simulatorWithClient({ scenario: 'demo' });

  it('finds the backup service through nodeServices on the simulator port and reads every state', async () => {
    const r = await collect(backupCollector, t.client);
    expect(r.ok, String(r.error)).toBe(true);
    expect(r.set.get('couchbase_backup_repositories', { state: 'active' })).toBe(2);
    expect(r.set.get('couchbase_backup_repositories', { state: 'archived' })).toBe(1);
    expect(r.set.get('couchbase_backup_repositories', { state: 'imported' })).toBe(1);
    const now = t.sim.ctx.now() / 1000;
    const hourly = r.set.get('couchbase_backup_repository_last_success_timestamp_seconds', { repository: 'hourlyBackups' }) as number;
    expect(now - hourly).toBeLessThan(3600 + 60);
    const weekly = r.set.get('couchbase_backup_repository_last_success_timestamp_seconds', { repository: 'weeklyFull' }) as number;
    expect(now - weekly).toBeGreaterThan(72 * 3600 - 60);
    expect(r.set.get('couchbase_backup_repository_info', { repository: 'weeklyFull', state: 'active', status: 'paused', plan: 'BackupAndMergePlan', bucket: 'beer-sample' })).toBe(1);
  });

  it('is not applicable when no node runs the backup service', async () => {
    const other = createSimulator({});
    for (const n of other.ctx.nodes) n.services = n.services.filter((s) => s !== 'backup');
    const c = createClient({ cluster: 'o', url: await other.listen(), username: 'Administrator', password: 'password' });
    try {
      const r = await collect(backupCollector, c);
      expect(r.ok, String(r.error)).toBe(true);
      expect(r.notApplicable).toBe('no backup service');
    } finally {
      await c.close();
      await other.close();
    }
  });
});
