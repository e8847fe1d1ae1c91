/**
 * The simulator is an oracle only if it is independent of the code it tests (issue 11, item 5): it never
 * imports collector or metric code, nor the REST layer's parsers, so a bug there cannot be mirrored here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { goDurationOfMs } from '../../src/simulator/modules/search.js';

const SIM = join(import.meta.dirname, '..', '..', 'src', 'simulator');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('simulator independence', () => {
  it('imports nothing from src/collectors, src/metrics or src/couchbase', () => {
    const offenders: string[] = [];
    for (const f of files(SIM)) {
      const rel = relative(SIM, f);
      for (const m of readFileSync(f, 'utf8').matchAll(/from '([^']+)'/g)) {
        if (/\/(collectors|metrics|couchbase)\//.test(m[1] as string)) offenders.push(`${rel}: ${m[1]}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('writes executionTime as Go\'s Duration.String() does (values from Go\'s documentation and runs)', () => {
    expect(goDurationOfMs(0)).toBe('0s');
    expect(goDurationOfMs(250)).toBe('250ms');
    expect(goDurationOfMs(1500)).toBe('1.5s');
    expect(goDurationOfMs(42_000)).toBe('42s');
    expect(goDurationOfMs(123_004)).toBe('2m3.004s');
    expect(goDurationOfMs(3_600_000)).toBe('1h0m0s');
    expect(goDurationOfMs(5_430_120)).toBe('1h30m30.12s');
  });
});
