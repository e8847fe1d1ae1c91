/**
 * The settings table (src/config/settings.ts) is the one source of every flag, variable and default: `--help`,
 * docs/configuration.md and loadConfig() must agree with it, and the defaults elsewhere are the table's. The
 * expected defaults below are written by hand (node_exporter's --web.max-requests is 40; the others are the values
 * cbwatch has documented since they were introduced).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { usage } from '../../src/config/flags.js';
import { loadConfig } from '../../src/config/load.js';
import { parseArgs } from '../../src/config/flags.js';
import { CLUSTER_SETTINGS, DEFAULT_MAX_REQUESTS, SETTING_ROWS, defaultText } from '../../src/config/settings.js';
import { renderConfigurationDoc } from '../../src/tools/config-doc.js';
import { DEFAULT_MAX_DYNAMIC_FAMILIES } from '../../src/collectors/dynamic.js';
import { DEFAULT_PROBE_INTERVAL_MS } from '../../src/scheduler/index.js';
import { DEFAULT_MAX_LABEL_VALUE_LENGTH } from '../../src/metrics/family.js';
import { GC_EVERY_DEFAULT_BYTES } from '../../src/collection/release.js';
import { DEFAULT_MAX_REQUESTS as APP_MAX_REQUESTS } from '../../src/server/app.js';

const ROOT = join(import.meta.dirname, '..', '..');
const DOC = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
const MiB = 1024 * 1024;

function helpLine(flag: string): string | undefined {
  return usage()
    .split('\n')
    .find((l) => l.startsWith(`  --${flag} `));
}

describe('the settings table', () => {
  it('docs/configuration.md holds the tables generated from it (npm run generate)', () => {
    expect(renderConfigurationDoc(DOC)).toBe(DOC);
  });

  it('--help lists every flag of the table, with the default the table holds', () => {
    for (const [, s] of SETTING_ROWS) {
      if (s.flag === undefined) continue;
      const line = helpLine(s.flag);
      expect(line, `--${s.flag}`).toBeDefined();
      const d = defaultText(s);
      // A boolean's default is "off", said in words where the help says it at all.
      if (d !== undefined && typeof s.default !== 'boolean' && s.default !== undefined) expect(line, `--${s.flag}`).toContain(`default ${d}`);
    }
  });

  it('gives every setting a variable or says why it has none, and every variable a flag or says why not', () => {
    for (const [name, s] of SETTING_ROWS) {
      if (s.flag !== undefined && s.env === undefined) expect(s.noEnv, name).toMatch(/\w{3}/);
      if (s.env !== undefined && s.flag === undefined) expect(s.noFlag, name).toMatch(/\w{3}/);
      if (s.env !== undefined) expect(s.env, name).toMatch(/^CBWATCH_[A-Z_]+$/);
    }
    // The flags of `run` without a variable, as the issue asked to be told.
    const runOnly = SETTING_ROWS.filter(([, s]) => s.commands?.includes('run') && s.env === undefined).map(([n]) => n);
    expect(runOnly.sort()).toEqual(['config.check', 'web.enable-lifecycle']);
    expect(DOC).toMatch(/- `--web\.enable-lifecycle`: it opens an endpoint/);
  });

  it('has the defaults cbwatch documents, and loadConfig applies them', () => {
    const c = loadConfig({}, {}, { allowNoClusters: true });
    expect(c.web).toMatchObject({ listenHost: '', listenPort: 9420, telemetryPath: '/metrics', maxRequests: 40 });
    expect(c.maxBufferedBytes).toBe(256 * MiB);
    expect(c.maxAnswerValues).toBe(4_000_000);
    expect(c.gcEveryAnswerBytes).toBeUndefined();
    expect(c.log).toEqual({ level: 'info', format: 'json' });
    const cluster = loadConfig({ 'couchbase.url': 'http://cb1:8091' }, {}).clusters[0];
    expect(cluster).toMatchObject({ concurrency: 8, connectTimeout: 5000, requestTimeout: 10_000, maxResponseBytes: 64 * MiB, probeInterval: 15_000, maxDynamicFamilies: 5000, maxLabelValueLength: 1024 });
  });

  it('is where the rest of the code takes its defaults from', () => {
    expect(APP_MAX_REQUESTS).toBe(DEFAULT_MAX_REQUESTS);
    expect(DEFAULT_MAX_DYNAMIC_FAMILIES).toBe(CLUSTER_SETTINGS.max_dynamic_families.default);
    expect(DEFAULT_PROBE_INTERVAL_MS).toBe(CLUSTER_SETTINGS.probe_interval.default);
    expect(DEFAULT_MAX_LABEL_VALUE_LENGTH).toBe(CLUSTER_SETTINGS.max_label_value_length.default);
    expect(GC_EVERY_DEFAULT_BYTES).toBe(8 * MiB);
    // No other module of src/ writes these defaults as numbers of its own.
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.ts') && !p.endsWith(join('config', 'settings.ts'))) {
          const text = readFileSync(p, 'utf8');
          if (/export const (?:DEFAULT_MAX_REQUESTS|DEFAULT_MAX_DYNAMIC_FAMILIES|DEFAULT_PROBE_INTERVAL_MS|DEFAULT_MAX_LABEL_VALUE_LENGTH|GC_EVERY_DEFAULT_BYTES|DEFAULT_MAX_BUFFERED_BYTES) = \d/.test(text)) offenders.push(p);
        }
      }
    };
    walk(join(ROOT, 'src'));
    expect(offenders).toEqual([]);
  });
});

describe('loadConfig over the table: flags over environment over default', () => {
  // [flag, flag value, variable value, what the flag gives, what the variable gives]
  const cases: Array<[string, string, string, (c: ReturnType<typeof loadConfig>) => unknown, unknown, unknown]> = [
    ['web.listen-address', ':1', ':2', (c) => c.web.listenPort, 1, 2],
    ['web.telemetry-path', '/a', '/b', (c) => c.web.telemetryPath, '/a', '/b'],
    ['web.max-requests', '1', '2', (c) => c.web.maxRequests, 1, 2],
    ['couchbase.max-buffered-bytes', '2MiB', '3MiB', (c) => c.maxBufferedBytes, 2 * MiB, 3 * MiB],
    ['couchbase.max-answer-values', '20000', '30000', (c) => c.maxAnswerValues, 20_000, 30_000],
    ['collection.gc-every', '0', '2MiB', (c) => c.gcEveryAnswerBytes, 0, 2 * MiB],
    ['log.level', 'debug', 'warn', (c) => c.log.level, 'debug', 'warn'],
    ['log.format', 'logfmt', 'pretty', (c) => c.log.format, 'logfmt', 'pretty'],
    ['shard', '0/2', '1/2', (c) => c.shard, { index: 0, total: 2 }, { index: 1, total: 2 }],
  ];
  it.each(cases)('--%s', (flag, flagValue, envValue, read, fromFlag, fromEnv) => {
    const env = SETTING_ROWS.find(([, s]) => s.flag === flag)?.[1].env as string;
    const flags = parseArgs(['run', `--${flag}`, flagValue]).flags;
    const opts = { allowNoClusters: true };
    expect(read(loadConfig(flags, { [env]: envValue }, opts))).toEqual(fromFlag);
    expect(read(loadConfig({}, { [env]: envValue }, opts))).toEqual(fromEnv);
  });

  it('holds a variable to the bounds of its flag', () => {
    expect(() => loadConfig({}, { CBWATCH_WEB_MAX_REQUESTS: '2000000' }, { allowNoClusters: true })).toThrow(
      'CBWATCH_WEB_MAX_REQUESTS: 2000000 is out of range (0..1000000)',
    );
    expect(() => parseArgs(['--web.max-requests', '2000000'])).toThrow('--web.max-requests: 2000000 is out of range (0..1000000)');
  });
});

describe('src/config imports', () => {
  it('form no circle, type imports included', () => {
    const dir = join(ROOT, 'src', 'config');
    const graph = new Map<string, string[]>();
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(join(dir, f), 'utf8');
      const deps = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.\/[^']+)\.js'/gm)].map((m) => resolve(dirname(join(dir, f)), `${m[1] as string}.ts`));
      graph.set(join(dir, f), deps);
    }
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (f: string, path: string[]): void => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') {
        cycles.push([...path.slice(path.indexOf(f)), f].map((p) => p.slice(dir.length + 1)).join(' → '));
        return;
      }
      state.set(f, 'open');
      for (const d of graph.get(f) ?? []) visit(d, [...path, f]);
      state.set(f, 'done');
    };
    for (const f of graph.keys()) visit(f, []);
    expect(cycles).toEqual([]);
  });
});

describe('proxies', () => {
  it('docs/configuration.md says HTTP_PROXY, HTTPS_PROXY and NO_PROXY are ignored', () => {
    expect(DOC).toMatch(/`HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` \(and their lower-case forms\) are ignored/);
  });
});
