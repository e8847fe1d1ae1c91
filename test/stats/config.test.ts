/** `stats_source` in the configuration file: its values, its default, and a bad value named by its path. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeConfig, loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'cbwatch-stats-source-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(extra: string): string {
  const f = join(dir, `c${Math.random().toString(36).slice(2)}.yml`);
  writeFileSync(f, `clusters:\n  - name: a\n    url: http://cb.example:8091\n${extra}`);
  return f;
}

describe('stats_source', () => {
  it('defaults to auto and is shown in the configuration summary', () => {
    const c = loadConfig({ config: file('') }, {});
    expect(c.clusters[0]?.statsSource).toBe('auto');
    expect(describeConfig(c)).toContain('    stats_source: auto');
  });
  it.each(['auto', 'range', 'envelope'])('accepts %s', (v) => {
    expect(loadConfig({ config: file(`    stats_source: ${v}\n`) }, {}).clusters[0]?.statsSource).toBe(v);
  });
  it('refuses anything else, naming the key', () => {
    const f = file('    stats_source: prometheus\n');
    expect(() => loadConfig({ config: f }, {})).toThrow(ConfigError);
    expect(() => loadConfig({ config: f }, {})).toThrow(/clusters\[0\]\.stats_source|clusters\.0\.stats_source/);
  });
});
