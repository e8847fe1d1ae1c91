/**
 * The generated alert files (combined rules, PrometheusRule, runbook, thresholds table) match what the
 * fragments produce, and the generator itself behaves: deterministic, canonical, rejecting duplicates.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { staleFiles } from '../../src/tools/files.js';
import {
  allGroups,
  demoteHeadings,
  loadFragments,
  parseRuleFile,
  renderAlerts,
  rulesFileText,
  rulesWithFor,
  thresholdsOf,
} from '../../src/tools/gen-alerts.js';

describe('generated alert files', () => {
  const files = renderAlerts();

  it('are up to date with the fragments (run npm run generate)', () => {
    const stale = staleFiles(PACKAGE_ROOT, files);
    expect(stale, `stale generated files: ${stale.join(', ')} — run npm run generate`).toEqual([]);
  });

  it('render the same bytes twice', () => {
    expect(renderAlerts()).toEqual(files);
  });

  it('hold every group of every fragment, in area order, exporter first', () => {
    const combined = parse(files['alerts/cbwatch.rules.yml'] as string) as { groups: { name: string; rules: unknown[] }[] };
    const fragments = loadFragments();
    expect(combined.groups.map((g) => g.name)).toEqual(fragments.flatMap((f) => f.groups.map((g) => g.name)));
    expect(combined.groups[0]?.name).toBe('exporter');
    const count = fragments.flatMap((f) => f.groups).reduce((n, g) => n + g.rules.length, 0);
    expect(combined.groups.reduce((n, g) => n + g.rules.length, 0)).toBe(count);
  });

  it('render the PrometheusRule with the same groups', () => {
    const pr = parse(files['alerts/kubernetes/prometheusrule.yml'] as string) as { apiVersion: string; kind: string; metadata: { name: string }; spec: { groups: unknown } };
    const combined = parse(files['alerts/cbwatch.rules.yml'] as string) as { groups: unknown };
    expect(pr.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(pr.kind).toBe('PrometheusRule');
    expect(pr.metadata.name).toBe('cbwatch');
    expect(pr.spec.groups).toEqual(combined.groups);
  });

  it('put every alert in the runbook index and the thresholds table', () => {
    const runbook = files['alerts/runbook.md'] as string;
    const readme = files['alerts/README.md'] as string;
    for (const f of loadFragments())
      for (const g of f.groups)
        for (const r of g.rules)
          if ('alert' in r) {
            expect(runbook).toContain(`[${r.alert}](#${r.alert.toLowerCase()})`);
            expect(readme).toContain(`[${r.alert}](runbook.md#${r.alert.toLowerCase()})`);
          }
  });
});

describe('generator', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cbwatch-gen-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const fragment = (group: string, alert: string) => `groups:
  - name: ${group}
    rules:
      - annotations:
          runbook_url: https://example.com/#${alert.toLowerCase()}
          summary: S.
        labels: { team: db, severity: warning }
        for: 10m
        expr: |
          foo > 1
        alert: ${alert}
`;

  it('orders keys canonically whatever the fragment order, and areas by the area list', () => {
    mkdirSync(join(dir, 'a', 'alerts', 'rules'), { recursive: true });
    writeFileSync(join(dir, 'a', 'alerts', 'rules', 'zeta.yml'), fragment('zeta', 'CouchbaseZeta'));
    writeFileSync(join(dir, 'a', 'alerts', 'rules', 'xdcr.yml'), fragment('xdcr', 'CouchbaseX'));
    writeFileSync(join(dir, 'a', 'alerts', 'rules', 'exporter.yml'), fragment('exporter', 'CbwatchE'));
    const files = renderAlerts(join(dir, 'a'));
    const text = files['alerts/cbwatch.rules.yml'] as string;
    expect(text.indexOf('name: exporter')).toBeLessThan(text.indexOf('name: xdcr'));
    expect(text.indexOf('name: xdcr')).toBeLessThan(text.indexOf('name: zeta'));
    expect(text).toContain(`      - alert: CbwatchE
        expr: foo > 1
        for: 10m
        labels:
          severity: warning
          team: db
        annotations:
          summary: S.
          runbook_url: https://example.com/#cbwatche
`);
    // No README in this tree: nothing to substitute.
    expect(files['alerts/README.md']).toBeUndefined();
  });

  it('rejects an alert defined twice and a malformed fragment', () => {
    const a = parseRuleFile(fragment('one', 'CouchbaseSame'), 'one.yml');
    const b = parseRuleFile(fragment('two', 'CouchbaseSame'), 'two.yml');
    expect(() => allGroups([{ area: 'one', groups: a, runbook: undefined }, { area: 'two', groups: b, runbook: undefined }])).toThrow(/defined twice/);
    expect(() => parseRuleFile('groups:\n  - name: x\n    rules:\n      - alert: A\n', 'bad.yml')).toThrow(/bad\.yml.*expr/);
    expect(() => parseRuleFile('rules: []\n', 'bad.yml')).toThrow(/groups/);
  });

  it('shortens every for: window for tests without touching the rest', () => {
    const groups = parseRuleFile(fragment('g', 'CouchbaseA'), 'g.yml');
    const short = rulesWithFor(groups, '2s');
    expect(short).toContain('for: 2s');
    expect(short).not.toContain('for: 10m');
    expect(short.replace('for: 2s', 'for: 10m')).toBe(rulesFileText(groups));
  });

  it('demotes headings outside code fences only', () => {
    expect(demoteHeadings('# A\n## B\n```sh\n# comment\n```\n### C')).toBe('## A\n### B\n```sh\n# comment\n```\n#### C');
  });

  it('reads thresholds from expressions', () => {
    expect(thresholdsOf('(couchbase_trusted_ca_not_after_timestamp_seconds - time()) < 7 * 86400')).toEqual(['< 7 * 86400 (7 days)']);
    expect(thresholdsOf('sum(x{a!="1"}) > 100000 and deriv(y[15m]) > 0')).toEqual(['> 100000', '> 0']);
    expect(thresholdsOf('absent(up{job=~"cbwatch.*"})')).toEqual([]);
    expect(thresholdsOf('time() - t > 900')).toEqual(['> 900 (15 min)']);
    expect(thresholdsOf('a / b < 20 / 100')).toEqual(['< 20 / 100 (20%)']);
  });
});
