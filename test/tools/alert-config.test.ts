/**
 * The configurable alerts (src/tools/alert-config.ts): selector injection, durations in words, overrides and
 * their validation, and `cbwatch rules` on the shipped rules — its default output is the shipped file, an override
 * reaches the rule (expression, `for`, severity and the numbers in the description), and promtool accepts and
 * tests the overridden output.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main } from '../../src/cli.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { applyOverrides, humanDuration, injectSelector, renderConfigured } from '../../src/tools/alert-config.js';
import { configurableAlerts, renderAlerts } from '../../src/tools/gen-alerts.js';
import { requireBinary } from '../helpers/tools.js';

const promtool = requireBinary('promtool');
const tmp = mkdtempSync(join(tmpdir(), 'cbwatch-rules-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
type RulesDoc = { groups: Array<{ name: string; rules: Rule[] }> };

async function rules(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(['rules', ...args], (s) => void (out += s), (s) => void (err += s));
  return { code, out, err };
}

function alertOf(doc: RulesDoc, name: string): Rule {
  const r = doc.groups.flatMap((g) => g.rules).find((x) => x.alert === name);
  if (!r) throw new Error(`no ${name}`);
  return r;
}

function promtoolRun(args: string[]): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(promtool as string, args, { encoding: 'utf8', stdio: 'pipe' }) };
  } catch (e) {
    const x = e as { status?: number; stdout?: string; stderr?: string };
    return { code: x.status ?? 1, out: `${x.stdout ?? ''}${x.stderr ?? ''}` };
  }
}

describe('selector injection', () => {
  it('adds the selector to every cbwatch/Couchbase series and nothing else', () => {
    expect(injectSelector('couchbase_up == 0')).toBe('couchbase_up%(selBraces)s == 0');
    expect(injectSelector('couchbase_node_status{status="unhealthy"} == 1')).toBe('couchbase_node_status{status="unhealthy"%(selComma)s} == 1');
    expect(injectSelector('couchbase_x{} > 0')).toBe('couchbase_x{%(sel)s} > 0');
    // functions, by/on label lists, strings, ranges and up are left alone
    expect(injectSelector('sum without (node) (couchbase_xdcr_changes_left)')).toBe('sum without (node) (couchbase_xdcr_changes_left%(selBraces)s)');
    expect(injectSelector('a_b and on (couchbase_cluster, instance) cbwatch_collector_success == 1')).toBe(
      'a_b and on (couchbase_cluster, instance) cbwatch_collector_success%(selBraces)s == 1',
    );
    expect(injectSelector('deriv(couchbase_q[10m]) > 0 and (couchbase_p offset 30m)')).toBe('deriv(couchbase_q%(selBraces)s[10m]) > 0 and (couchbase_p%(selBraces)s offset 30m)');
    expect(injectSelector('label_replace(couchbase_a{position!="0"}, "kind", "couchbase_b", "", "")')).toBe(
      'label_replace(couchbase_a{position!="0"%(selComma)s}, "kind", "couchbase_b", "", "")',
    );
    expect(injectSelector('up{job=~"cbwatch.*"} == 0')).toBe('up{job=~"cbwatch.*"} == 0');
  });

  it('reads durations in words the way the annotations write them', () => {
    expect(['15m', '5m', '1h', '6h', '1m', '30s', '7d', '1h30m'].map(humanDuration)).toEqual([
      '15 minutes',
      '5 minutes',
      'an hour',
      '6 hours',
      'a minute',
      '30 seconds',
      '7 days',
      '1h30m',
    ]);
  });
});

describe('overrides', () => {
  const { defaults } = configurableAlerts();

  it('take the type of the default they replace and name the key when they are wrong', () => {
    const c = applyOverrides(defaults, ['alerts.CouchbaseXdcrBacklogHigh.threshold=2.5e5', 'alerts.CouchbaseNodeCpuHigh.for=1h', 'alerts.CouchbaseDown.enabled=false', 'selector=job="x"']);
    expect(c.alerts.CouchbaseXdcrBacklogHigh?.threshold).toBe(250000);
    expect(c.alerts.CouchbaseNodeCpuHigh?.for).toBe('1h');
    expect(c.alerts.CouchbaseDown?.enabled).toBe(false);
    expect(c.selector).toBe('job="x"');
    expect(defaults.alerts.CouchbaseDown?.enabled, 'the defaults are not modified').toBe(true);
    const bad: Array<[string, RegExp]> = [
      ['alerts.CouchbaseXdcrBacklogHigh.threshold=lots', /threshold: expected a number/],
      ['alerts.CouchbaseXdcrBacklogHigh.for=soon', /for: expected a duration/],
      ['alerts.CouchbaseDown.enabled=yes', /enabled: expected true or false/],
      ['alerts.CouchbaseDown.severity=very bad', /severity: expected a severity/],
      ['alerts.CouchbaseDown.threshold=3', /alerts.CouchbaseDown.threshold: unknown key/],
      ['alerts.NoSuchAlert.for=5m', /alerts.NoSuchAlert.for: unknown key/],
      ['runbookUrlBase=', /runbookUrlBase: must not be empty/],
      ['threshold', /expected key=value/],
    ];
    for (const [set, re] of bad) expect(() => applyOverrides(defaults, [set]), set).toThrow(re);
  });
});

describe('a rule added to alerts/rules later', () => {
  it('reaches the shipped file, the mixin and the --set keys with no code change', () => {
    const root = join(tmp, 'pkg');
    mkdirSync(join(root, 'alerts'), { recursive: true });
    cpSync(join(PACKAGE_ROOT, 'alerts', 'rules'), join(root, 'alerts', 'rules'), { recursive: true });
    cpSync(join(PACKAGE_ROOT, 'alerts', 'parameters.yml'), join(root, 'alerts', 'parameters.yml'));
    writeFileSync(
      join(root, 'alerts', 'rules', 'bucket_stats.yml'),
      `groups:
  - name: bucket_stats
    rules:
      - alert: CouchbaseBucketStatsStale
        expr: time() - couchbase_bucket_stats_last_sample_timestamp_seconds > 300
        for: 10m
        labels:
          severity: warning
        annotations:
          summary: Bucket statistics have not moved for 10 minutes.
          description: "Bucket {{ $labels.bucket }}: newest sample {{ $value | humanizeDuration }} old for 10 minutes (threshold 300s, 100% stale)."
          runbook_url: https://github.com/cbwatch/cbwatch/blob/main/alerts/runbook.md#couchbasebucketstatsstale
`,
    );
    const files = renderAlerts(root);
    const shipped = parse(files['alerts/cbwatch.rules.yml'] as string) as RulesDoc;
    expect(alertOf(shipped, 'CouchbaseBucketStatsStale').expr).toBe('time() - couchbase_bucket_stats_last_sample_timestamp_seconds > 300');
    expect(files['mixin/alerts.libsonnet']).toContain('CouchbaseBucketStatsStale: { enabled: true, "for": "10m", severity: "warning" }');
    const { groups, defaults } = configurableAlerts(root);
    const c = applyOverrides(defaults, ['alerts.CouchbaseBucketStatsStale.for=30m', 'selector=job="a"']);
    const r = alertOf({ groups: renderConfigured(groups, c) } as unknown as RulesDoc, 'CouchbaseBucketStatsStale');
    expect(r.expr).toBe('time() - couchbase_bucket_stats_last_sample_timestamp_seconds{job="a"} > 300');
    expect(r.annotations?.summary).toBe('Bucket statistics have not moved for 30 minutes.');
    expect(r.annotations?.description).toContain('100% stale');
    // A parameter declared for it needs only a line in parameters.yml; one whose number is not in the rule is refused.
    writeFileSync(join(root, 'alerts', 'parameters.yml'), `${readFileSync(join(root, 'alerts', 'parameters.yml'), 'utf8')}CouchbaseBucketStatsStale:\n  thresholdSeconds: 300\n`);
    expect(configurableAlerts(root).defaults.alerts.CouchbaseBucketStatsStale?.thresholdSeconds).toBe(300);
    writeFileSync(join(root, 'alerts', 'parameters.yml'), 'CouchbaseBucketStatsStale:\n  thresholdSeconds: 600\n');
    expect(() => configurableAlerts(root)).toThrow(/600 does not appear in the expression/);
  });
});

describe('cbwatch rules', () => {
  const shipped = parse(readFileSync(join(PACKAGE_ROOT, 'alerts', 'cbwatch.rules.yml'), 'utf8')) as RulesDoc;

  it('prints the shipped rules when nothing is set', async () => {
    const r = await rules();
    expect(r.code, r.err).toBe(0);
    expect(parse(r.out)).toEqual(shipped);
    expect(r.out).toMatch(/^# Generated by cbwatch .* `cbwatch rules`\n/);
  });

  it('carries an override to the expression, for:, severity, description and runbook link, and drops a disabled alert', async () => {
    const r = await rules(
      '--set',
      'alerts.CouchbaseXdcrBacklogHigh.threshold=200000',
      '--set',
      'alerts.CouchbaseXdcrBacklogHigh.for=30m',
      '--set',
      'alerts.CouchbaseXdcrBacklogHigh.severity=critical',
      '--set',
      'alerts.CouchbaseRebalanceStuck.flatWindow=1h',
      '--set',
      'alerts.CouchbaseUiOverHttpEnabled.enabled=false',
      '--set',
      'runbookUrlBase=https://wiki.example.com/cbwatch',
    );
    expect(r.code, r.err).toBe(0);
    const doc = parse(r.out) as RulesDoc;
    const a = alertOf(doc, 'CouchbaseXdcrBacklogHigh');
    expect(a.expr).toBe('sum without (node) (couchbase_xdcr_changes_left) > 200000');
    expect(a.for).toBe('30m');
    expect(a.labels?.severity).toBe('critical');
    expect(a.annotations?.description).toContain('for 30 minutes (threshold 200000)');
    expect(a.annotations?.runbook_url).toBe('https://wiki.example.com/cbwatch#couchbasexdcrbackloghigh');
    const stuck = alertOf(doc, 'CouchbaseRebalanceStuck');
    expect(stuck.expr).toContain('changes(couchbase_rebalance_progress_ratio[1h]) == 0');
    expect(stuck.expr).toContain('(couchbase_rebalance_progress_ratio offset 1h)');
    expect(stuck.annotations?.summary).toBe('A Couchbase rebalance is running but its progress has not moved for an hour.');
    expect(stuck.for).toBe('5m');
    expect(doc.groups.flatMap((g) => g.rules).some((x) => x.alert === 'CouchbaseUiOverHttpEnabled')).toBe(false);
    // everything not set is as shipped
    expect(alertOf(doc, 'CouchbaseXdcrBacklogGrowing')).toEqual({ ...alertOf(shipped, 'CouchbaseXdcrBacklogGrowing'), annotations: { ...alertOf(shipped, 'CouchbaseXdcrBacklogGrowing').annotations, runbook_url: 'https://wiki.example.com/cbwatch#couchbasexdcrbackloggrowing' } });
  });

  it('writes --out, prints a PrometheusRule with --format prometheusrule, lists keys, and exits 2 naming a bad key', async () => {
    const file = join(tmp, 'out.yml');
    expect((await rules('--out', file)).code).toBe(0);
    expect(parse(readFileSync(file, 'utf8'))).toEqual(shipped);
    const pr = await rules('--format', 'prometheusrule');
    expect((parse(pr.out) as { kind: string; spec: RulesDoc }).spec.groups).toEqual(shipped.groups);
    const list = await rules('--list');
    expect(list.out).toContain('alerts.CouchbaseXdcrBacklogHigh.threshold=100000\n');
    expect(list.out).toContain('alerts.CouchbaseDiskSpaceLow.thresholdPercent=20\n');
    const bad = await rules('--set', 'alerts.CouchbaseXdcrBacklogHigh.treshold=5');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('alerts.CouchbaseXdcrBacklogHigh.treshold: unknown key');
    expect((await rules('--format', 'json')).code).toBe(2);
    expect((await rules('--help')).out).toContain('Usage: cbwatch rules');
    expect((await rules('--bogus')).code).toBe(2);
  });
});

describe.skipIf(!promtool)('cbwatch rules output under promtool', () => {
  it('an overridden threshold, for: and severity pass promtool check rules and a test written for them', async () => {
    const dir = join(tmp, 'override');
    mkdirSync(dir, { recursive: true });
    const r = await rules('--set', 'alerts.CouchbaseXdcrBacklogHigh.threshold=200000', '--set', 'alerts.CouchbaseXdcrBacklogHigh.for=30m', '--set', 'alerts.CouchbaseXdcrBacklogHigh.severity=critical', '--out', join(dir, 'rules.yml'));
    expect(r.code, r.err).toBe(0);
    const check = promtoolRun(['check', 'rules', join(dir, 'rules.yml')]);
    expect(check.code, check.out).toBe(0);
    // 150000 left would page with the default threshold; with 200000 it stays silent. 250000 fires at 30m, not 29m.
    const labels = 'job="cbwatch", instance="cbwatch-0:9420", couchbase_cluster="prod-eu", source_bucket="orders", target_cluster_uuid="u1", target_cluster_name="dr", node="cb1:8091"';
    const test = `rule_files:
  - rules.yml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'couchbase_xdcr_changes_left{${labels}, target_bucket="below"}'
        values: '150000x40'
      - series: 'couchbase_xdcr_changes_left{${labels}, target_bucket="above"}'
        values: '250000x40'
    alert_rule_test:
      - eval_time: 29m
        alertname: CouchbaseXdcrBacklogHigh
        exp_alerts: []
      - eval_time: 30m
        alertname: CouchbaseXdcrBacklogHigh
        exp_alerts:
          - exp_labels: { severity: critical, job: cbwatch, instance: "cbwatch-0:9420", couchbase_cluster: prod-eu, source_bucket: orders, target_cluster_uuid: u1, target_cluster_name: dr, target_bucket: above }
            exp_annotations:
              summary: "An XDCR replication has a large backlog of changes still to replicate."
              description: "Replication orders → dr/above (remote uuid u1) of Couchbase cluster prod-eu has had 250000 changes left, summed over the source nodes, for 30 minutes (threshold 200000). The remote copy is that far behind: data written since then would be lost if this cluster failed now."
              runbook_url: "https://github.com/cbwatch/cbwatch/blob/main/alerts/runbook.md#couchbasexdcrbackloghigh"
`;
    writeFileSync(join(dir, 'override.test.yml'), test);
    const t = promtoolRun(['test', 'rules', join(dir, 'override.test.yml')]);
    expect(t.code, t.out).toBe(0);
  });

  it('with a selector every shipped promtool test still passes (the selector reaches every series and keeps them), and fails with a selector that matches nothing', async () => {
    for (const [selector, ok] of [
      ['couchbase_cluster!="elsewhere"', true],
      ['couchbase_cluster="elsewhere"', false],
    ] as const) {
      const dir = join(tmp, ok ? 'sel-ok' : 'sel-none');
      mkdirSync(join(dir, 'rules'), { recursive: true });
      mkdirSync(join(dir, 'tests'), { recursive: true });
      const r = await rules('--set', `selector=${selector}`, '--out', join(dir, 'rules', 'all.yml'));
      expect(r.code, r.err).toBe(0);
      const text = readFileSync(join(dir, 'rules', 'all.yml'), 'utf8');
      expect(text).toContain(`couchbase_xdcr_changes_left{${selector}}`);
      expect(text).toContain(`couchbase_node_status{status="unhealthy", ${selector}}`);
      const src = join(PACKAGE_ROOT, 'alerts', 'tests');
      const files = readdirSync(src).filter((f) => f.endsWith('.test.yml'));
      for (const f of files) writeFileSync(join(dir, 'tests', f), readFileSync(join(src, f), 'utf8').replace(/^ {2}- \.\.\/rules\/.*$/gm, '  - ../rules/all.yml'));
      expect(promtoolRun(['check', 'rules', join(dir, 'rules', 'all.yml')]).code).toBe(0);
      // The negative case needs one file only: nodes' tests expect alerts, and none can fire.
      const t = promtoolRun(['test', 'rules', ...(ok ? files : ['nodes.test.yml']).map((f) => join(dir, 'tests', f))]);
      if (ok) expect(t.code, t.out).toBe(0);
      else expect(t.code, 'a selector that matches nothing must make the tests fail').not.toBe(0);
    }
  });
});
