/** Exporter conventions on the command line (issue 26, item 3): --web.telemetry-path, --[no-]collector.<name>. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { parseArgs, usage } from '../../src/config/flags.js';
import { describeConfig, loadConfig } from '../../src/config/load.js';
import { COLLECTOR_NAMES } from '../../src/config/schema.js';
import { ConfigError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'cbwatch-conv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const URL_ENV = { CBWATCH_COUCHBASE_URL: 'http://cb1:8091' };

function load(argv: string[], env: Record<string, string> = {}) {
  return loadConfig(parseArgs(argv).flags, { ...URL_ENV, ...env });
}

function configError(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('no ConfigError');
}

describe('--web.telemetry-path', () => {
  it('defaults to /metrics; the flag wins over CBWATCH_WEB_TELEMETRY_PATH', () => {
    expect(load([]).web.telemetryPath).toBe('/metrics');
    expect(load([], { CBWATCH_WEB_TELEMETRY_PATH: '/env' }).web.telemetryPath).toBe('/env');
    const c = load(['--web.telemetry-path', '/exporter/couchbase-metrics'], { CBWATCH_WEB_TELEMETRY_PATH: '/env' });
    expect(c.web.telemetryPath).toBe('/exporter/couchbase-metrics');
    expect(describeConfig(c)).toContain('metrics at /exporter/couchbase-metrics');
    expect(usage()).toContain('--web.telemetry-path PATH');
  });

  it.each(['metrics', '/metrics/', '/a b', '/m?x=1', '/:param', '/*', '//x'])('refuses %j, naming the flag', (path) => {
    expect(configError(() => load(['--web.telemetry-path', path]))).toMatch(/--web\.telemetry-path: .* is not a URL path/);
  });

  it('refuses a path another route uses, naming the variable when it came from there', () => {
    expect(configError(() => load(['--web.telemetry-path', '/-/healthy']))).toMatch(/--web\.telemetry-path: "\/-\/healthy" is already used/);
    expect(configError(() => load([], { CBWATCH_WEB_TELEMETRY_PATH: '/webhooks/x' }))).toMatch(/CBWATCH_WEB_TELEMETRY_PATH: "\/webhooks\/x" is already used/);
  });
});

describe('--collector.<name> / --no-collector.<name> / CBWATCH_COLLECTOR_<NAME>', () => {
  // Two clusters: the file turns xdcr on explicitly for one and search off for the other.
  const file = join(dir, 'two.yml');
  writeFileSync(
    file,
    [
      'clusters:',
      '  - { name: a, url: "http://a:8091", collectors: { xdcr: { enabled: true, interval: 45s } } }',
      '  - { name: b, url: "http://b:8091", collectors: { search: { enabled: false } } }',
      '',
    ].join('\n'),
  );
  const loadFile = (argv: string[], env: Record<string, string> = {}) => loadConfig(parseArgs(['--config', file, ...argv]).flags, env);
  const enabled = (c: ReturnType<typeof loadFile>, cluster: number, name: (typeof COLLECTOR_NAMES)[number]) => c.clusters[cluster]?.collectors[name].enabled;

  it('without switches the file decides', () => {
    const c = loadFile([]);
    expect([enabled(c, 0, 'xdcr'), enabled(c, 1, 'xdcr'), enabled(c, 0, 'search'), enabled(c, 1, 'search')]).toEqual([true, true, true, false]);
  });

  it('a flag switches a collector for every cluster, over the file, keeping its other options', () => {
    const c = loadFile(['--no-collector.xdcr', '--collector.search']);
    expect([enabled(c, 0, 'xdcr'), enabled(c, 1, 'xdcr')]).toEqual([false, false]);
    expect([enabled(c, 0, 'search'), enabled(c, 1, 'search')]).toEqual([true, true]);
    expect(c.clusters[0]?.collectors.xdcr.interval).toBe(45_000);
    expect(enabled(c, 0, 'buckets')).toBe(true);
    expect(describeConfig(c)).toContain('disabled:    xdcr');
  });

  it('the environment switches over the file; a flag over the environment', () => {
    const env = { CBWATCH_COLLECTOR_XDCR: 'false', CBWATCH_COLLECTOR_SEARCH: 'true', CBWATCH_COLLECTOR_BUCKET_STATS: '0' };
    let c = loadFile([], env);
    expect([enabled(c, 0, 'xdcr'), enabled(c, 1, 'search'), enabled(c, 0, 'bucket_stats')]).toEqual([false, true, false]);
    c = loadFile(['--collector.xdcr', '--no-collector.search'], env);
    expect([enabled(c, 0, 'xdcr'), enabled(c, 1, 'search'), enabled(c, 0, 'bucket_stats')]).toEqual([true, false, false]);
    // Empty counts as unset.
    expect(enabled(loadFile([], { CBWATCH_COLLECTOR_XDCR: '' }), 0, 'xdcr')).toBe(true);
  });

  it('the last of --collector.X and --no-collector.X wins', () => {
    expect(enabled(loadFile(['--collector.tasks', '--no-collector.tasks']), 0, 'tasks')).toBe(false);
    expect(enabled(loadFile(['--no-collector.tasks', '--collector.tasks']), 0, 'tasks')).toBe(true);
  });

  it('works without a file, with the single-cluster shortcut', () => {
    expect(load(['--no-collector.backup']).clusters[0]?.collectors.backup.enabled).toBe(false);
  });

  it('an unknown collector exits 2 naming it, as a flag or as a variable; so does a bad value', async () => {
    expect(configError(() => parseArgs(['--no-collector.bukets']))).toMatch(/--no-collector\.bukets: unknown collector "bukets" \(collectors: buckets, bucket_stats/);
    expect(configError(() => load([], { CBWATCH_COLLECTOR_FOO: 'true' }))).toMatch(/CBWATCH_COLLECTOR_FOO: unknown collector "foo"/);
    expect(configError(() => load([], { CBWATCH_COLLECTOR_XDCR: 'off' }))).toMatch(/CBWATCH_COLLECTOR_XDCR: expected true or false, got "off"/);
    expect(configError(() => parseArgs(['--collector.xdcr=false']))).toMatch(/--collector\.xdcr takes no value/);
    let err = '';
    const code = await main(['--collector.nosuch', '--config.check', '--couchbase.url', 'http://x:8091'], () => undefined, (s) => void (err += s));
    expect(code).toBe(2);
    expect(err).toContain('unknown collector "nosuch"');
  });

  it('--help lists the pair for every collector; the docs name every flag and variable', () => {
    const help = usage();
    const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');
    for (const name of COLLECTOR_NAMES) {
      expect(help).toContain(`--[no-]collector.${name} `);
      expect(doc).toContain(`\`CBWATCH_COLLECTOR_${name.toUpperCase()}\``);
      expect(doc).toContain(`\`--collector.${name}\``);
      expect(doc).toContain(`\`--no-collector.${name}\``);
    }
  });
});
