import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { autofailoverCollector } from '../../src/collectors/autofailover.js';
import { collect, fakeClient, FIXTURES, loadFixture, simulatorWithClient } from '../helpers/collect.js';
import { missing, requireBinary } from '../helpers/tools.js';

/** Checked once: a missing promtool skips its tests visibly (and fails under CI=true), never silently. */
const PROMTOOL = requireBinary('promtool');

const ROUTE = '/settings/autoFailover';
const RULES = join(import.meta.dirname, '..', '..', 'alerts', 'rules', 'cluster.yml');

describe('autofailover collector on real fixtures (every version)', () => {
  const files = readdirSync(join(FIXTURES, 'settings-autofailover')).filter((f) => f.endsWith('.json')).sort();

  it('has the fixtures of 4.0 to 7.1+', () => {
    expect(files.length).toBeGreaterThanOrEqual(6);
  });

  for (const file of files) {
    it(`matches the golden exposition for ${file}`, async () => {
      const r = await collect(autofailoverCollector, fakeClient({ [ROUTE]: loadFixture(`settings-autofailover/${file}`) }));
      expect(r.ok, String(r.error)).toBe(true);
      await expect(r.text).toMatchFileSnapshot(`../golden/autofailover-${file.replace(/\.json$/, '')}.prom`);
    });
  }

  it('reads the 5.5-7.0 settings, including server-group and data-disk failover', async () => {
    const r = await collect(autofailoverCollector, fakeClient({ [ROUTE]: loadFixture('settings-autofailover/docs-server-5.5-7.0.json') }));
    expect(r.set.get('couchbase_autofailover_enabled')).toBe(1);
    expect(r.set.get('couchbase_autofailover_timeout_seconds')).toBe(72);
    expect(r.set.get('couchbase_autofailover_events')).toBe(0);
    expect(r.set.get('couchbase_autofailover_max_events')).toBe(2);
    expect(r.set.get('couchbase_autofailover_server_group_enabled')).toBe(1);
    expect(r.set.get('couchbase_autofailover_data_disk_issues_enabled')).toBe(1);
    expect(r.set.get('couchbase_autofailover_data_disk_issues_time_period_seconds')).toBe(89);
  });

  it('exports other booleans generically, and maxCount 1 for versions without the setting', async () => {
    const r = await collect(autofailoverCollector, fakeClient({ [ROUTE]: loadFixture('settings-autofailover/docs-server-7.1plus.json') }));
    expect(r.set.get('couchbase_autofailover_setting_enabled', { setting: 'canAbortRebalance' })).toBe(1);
    const old = await collect(autofailoverCollector, fakeClient({ [ROUTE]: loadFixture('settings-autofailover/docs-server-4.0-5.1.json') }));
    expect(old.set.get('couchbase_autofailover_max_events')).toBe(1);
    expect(old.set.get('couchbase_autofailover_server_group_enabled')).toBeUndefined();
    const future = await collect(autofailoverCollector, fakeClient({
      [ROUTE]: { enabled: true, timeout: 5, count: 0, maxCount: 3, failoverPreserveDurabilityMajority: false, failoverOnDataDiskNonResponsiveness: { enabled: true, timePeriod: 120 }, note: 'x' },
    }));
    expect(future.set.get('couchbase_autofailover_setting_enabled', { setting: 'failoverPreserveDurabilityMajority' })).toBe(0);
    expect(future.set.get('couchbase_autofailover_setting_enabled', { setting: 'failoverOnDataDiskNonResponsiveness' })).toBe(1);
    expect(future.set.get('couchbase_autofailover_setting_time_period_seconds', { setting: 'failoverOnDataDiskNonResponsiveness' })).toBe(120);
  });

  it('emits nothing for missing or null fields (no zeros)', async () => {
    const r = await collect(autofailoverCollector, fakeClient({ [ROUTE]: { timeout: null } }));
    expect(r.ok).toBe(true);
    expect(r.set.size).toBe(0);
  });

  it('fails the poll on an HTTP error, a 403 or bad JSON', async () => {
    for (const answer of [{ status: 500, text: 'boom' }, { status: 403, body: { permissions: ['cluster.settings!read'] } }, { fail: 'invalid_json' as const }, { status: 200, body: { count: 'many' } }]) {
      const r = await collect(autofailoverCollector, fakeClient({ [ROUTE]: answer }));
      expect(r.ok).toBe(false);
    }
  });

  it.skipIf(PROMTOOL === undefined)('golden files pass promtool check metrics', () => {
    const promtool = PROMTOOL as string;
    const golden = join(import.meta.dirname, '..', 'golden');
    for (const f of readdirSync(golden).filter((x) => x.startsWith('autofailover-'))) {
      let out = '';
      try {
        out = execFileSync(promtool, ['check', 'metrics'], { input: execFileSync('cat', [join(golden, f)]), encoding: 'utf8', stdio: 'pipe' });
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string };
        out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
      }
      // The contract's names couchbase_autofailover_count/_max_count were renamed to _events/_max_events because
      // promtool's lint reserves the `_count` suffix for histograms and summaries.
      const findings = out.split('\n').filter((l) => l.trim() !== '');
      expect(findings, f).toEqual([]);
    }
  });
});

describe('autofailover against the simulator failover scenario', () => {
  // One automatic failover every 60 simulated seconds at 600x: maxCount 2 is reached after ~0.2 s.
  const t = simulatorWithClient({ scenario: 'failover', speed: 600, knobs: { autofailoverIntervalSeconds: 60, autofailoverMaxCount: 2 } });

  it('drives couchbase_autofailover_events up to couchbase_autofailover_max_events, and CouchbaseAutoFailoverExhausted fires on that series', async ({ skip }) => {
    const seen: number[] = [];
    let last = await collect(autofailoverCollector, t.client);
    for (let i = 0; i < 2000; i++) {
      expect(last.ok, String(last.error)).toBe(true);
      const count = last.set.get('couchbase_autofailover_events') as number;
      if (seen[seen.length - 1] !== count) seen.push(count);
      if (count >= (last.set.get('couchbase_autofailover_max_events') as number)) break;
      await new Promise((r) => setImmediate(r));
      last = await collect(autofailoverCollector, t.client);
    }
    const count = last.set.get('couchbase_autofailover_events');
    const max = last.set.get('couchbase_autofailover_max_events');
    expect(max).toBe(2);
    expect(count).toBe(max);
    // It climbed (never jumped backwards) and stops at maxCount.
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    expect(seen[seen.length - 1]).toBe(2);
    await new Promise((r) => setTimeout(r, 0));
    const again = await collect(autofailoverCollector, t.client);
    expect(again.set.get('couchbase_autofailover_events')).toBe(2);

    // Feed the collected series, as exposed, to the real alert rule.
    // Without promtool the rule half is reported as skipped, not passed.
    if (PROMTOOL === undefined) return skip();
    const promtool = PROMTOOL;
    const sample = (name: string): string => {
      const line = last.text.split('\n').find((l) => l.startsWith(`${name}{`));
      expect(line, name).toBeDefined();
      return (line as string).replace(/ [^ ]+$/, '').replace(/\{/, '{job="cbwatch",instance="cbwatch:9420",');
    };
    const dir = mkdtempSync(join(tmpdir(), 'cbw-afo-'));
    try {
      const test = [
        'rule_files:',
        `  - ${RULES}`,
        'evaluation_interval: 1m',
        'tests:',
        '  - interval: 1m',
        '    input_series:',
        `      - series: '${sample('couchbase_autofailover_events')}'`,
        `        values: '${count}x10'`,
        `      - series: '${sample('couchbase_autofailover_max_events')}'`,
        `        values: '${max}x10'`,
        '    alert_rule_test:',
        '      - eval_time: 0m',
        '        alertname: CouchbaseAutoFailoverExhausted',
        '        exp_alerts: []',
        '      - eval_time: 1m',
        '        alertname: CouchbaseAutoFailoverExhausted',
        '        exp_alerts:',
        '          - exp_labels:',
        '              severity: critical',
        '              job: cbwatch',
        '              instance: cbwatch:9420',
        '              couchbase_cluster: test',
        '            exp_annotations:',
        '              summary: Couchbase auto-failover has used its whole budget; no further node will be failed over automatically.',
        `              description: "Couchbase cluster test has done ${count} automatic failover(s), reaching its maxCount (threshold: count >= couchbase_autofailover_max_events). The next node failure needs an administrator."`,
        '              runbook_url: https://github.com/cbwatch/cbwatch/blob/main/alerts/runbook.md#couchbaseautofailoverexhausted',
        '',
      ].join('\n');
      writeFileSync(join(dir, 'exhausted.test.yml'), test);
      let out = '';
      let code = 0;
      try {
        out = execFileSync(promtool, ['test', 'rules', join(dir, 'exhausted.test.yml')], { encoding: 'utf8', stdio: 'pipe' });
      } catch (err) {
        const e = err as { status?: number; stdout?: string; stderr?: string };
        code = e.status ?? 1;
        out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
      }
      expect(code, out).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('resetCount brings the count back to 0 (only an administrator may)', async () => {
    const url = t.sim.ctx.baseUrl();
    const viewer = await fetch(`${url}/settings/autoFailover/resetCount`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from('viewer:viewer-password').toString('base64')}` } });
    expect(viewer.status).toBe(403);
    const admin = await fetch(`${url}/settings/autoFailover/resetCount`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from('Administrator:password').toString('base64')}` } });
    expect(admin.status).toBe(200);
    const r = await collect(autofailoverCollector, t.client);
    expect(r.set.get('couchbase_autofailover_events')).toBeLessThan(2);
  });
});
