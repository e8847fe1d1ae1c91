/** Exporter conventions on the command line (issue 26, item 3): --web.telemetry-path, --[no-]collector.<name>. */
import { describe, expect, it } from 'vitest';
import { parseArgs, usage } from '../../src/config/flags.js';
import { describeConfig, loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

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
